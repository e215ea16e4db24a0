"""Which routers every host routes through, live and planned (``Paths``), and which routers
can be drained while a change rolls out without cutting anyone off (``drain_plan``).

Why this matters: ``lnetctl set routing 0`` does not let a router finish its traffic.  Its
``lnet_parse_forward_locked()`` drops every message to forward from that moment on
(``if (!the_lnet.ln_routing) return -ECANCELED``), and the peers learn it only at their next
router ping (the ``LNET_PING_FEAT_RTE_DISABLED`` flag), when they mark its routes down and
choose their other gateways.  A drain is therefore graceful only for a net that has another
gateway meanwhile; for a net it is the only gateway of, it is a cut.

The decision (what an administrator does by hand): a router is drained only when, for every
host (client or server) that routes through it to a net it still needs, that host keeps a
route to the same net through another router that stays up for the whole drain -- one that is
not drained itself, not readdressed, has both nets in the plan, and whose route is in the plan
(so it exists from the "add routes" steps on and is never removed).  Routers are taken in name
order, each one only when draining it together with those already taken keeps that promise.
A router that cannot be drained is not: its peers' routes through it go first (``lnetctl route
del`` moves a peer's traffic at once, without a window), then its own old networks.  A router
whose address changes (LNet restarts to take it) and cannot be drained takes the paths it
alone carries down while it restarts: those nets are returned (``DrainPlan.lonely``) so that its
step says so.

Hosts the live PATH shows nothing of (missing, unreadable, or dumps without routes) are taken
to be as the plan says: the diff plans no change for them either.

Under ``--hosts`` the steps change only the hosts in scope.  A host outside it keeps what it
has: a client or server its live routes (not the plan's, which no step of this run adds), a
router its live networks.  So a drain or a route removal counts only on routes that exist or
that this run adds.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from lnetgen.diff.expected import Expected
from lnetgen.diff.result import ROUTER, Hop, Paths, Peer, natural
from lnetgen.live import HostState, LiveSet


@dataclass(frozen=True)
class DrainPlan:
    """The routers to drain, and per readdressed router that cannot be drained the nets it
    alone serves to some host."""

    drained: frozenset[str]
    lonely: Mapping[str, tuple[str, ...]]


def _net_of(nid: str) -> str:
    return nid.rpartition("@")[2]


def build_paths(
    expected: Mapping[str, Expected], live: LiveSet, scope: Collection[str] | None = None
) -> Paths:
    """The gateways of every host of ``expected`` (the plan's hosts), resolved to routers;
    ``scope``: the hosts the steps change (``--hosts``), the others kept as they are live."""
    plan_of: dict[str, str] = {}
    router_nets: dict[str, frozenset[str]] = {}
    outside = 0
    for name, exp in expected.items():
        if exp.role != ROUTER:
            continue
        router_nets[name] = frozenset(exp.nets)
        state = live.hosts.get(name)
        if scope is not None and name not in scope and state is not None and state.nets:
            kept_nets = frozenset(state.nets.nets)  # no step adds or removes a net there
            outside += kept_nets != router_nets[name]
            router_nets[name] = kept_nets
        for nid in (*exp.nids.values(), *(n for v in exp.rail_nids.values() for n in v)):
            plan_of[nid] = name
    live_of = dict(plan_of)
    for name in router_nets:
        state = live.hosts.get(name)
        if state is not None and state.nets is not None:
            for nids in state.nets.nids.values():
                live_of.update((nid, name) for nid in nids)
    seen: dict[
        tuple[object, ...], tuple[str, frozenset[Hop], frozenset[Hop], frozenset[Hop] | None]
    ] = {}
    count: dict[tuple[object, ...], int] = {}
    pending: dict[tuple[object, ...], bool] = {}
    for name, exp in expected.items():
        if exp.role == ROUTER:
            continue
        state = live.hosts.get(name)
        table = state.routes if state is not None else None
        kept = scope is not None and name not in scope
        key = (exp.role, id(exp.routes), id(table), id(state.peers) if state else 0, kept)
        if key not in seen:
            want = frozenset((n, plan_of.get(g, "?" + g), g) for n, g in exp.routes)
            have = want if table is None else _resolve(table.routes, state, live_of)
            top: dict[str, int] = {}
            for (n, _g), (_hop, prio) in exp.routes.items():
                top[n] = min(prio, top.get(n, prio))
            best = frozenset(h for h in want if exp.routes[h[0], h[2]][1] == top[h[0]])
            seen[key] = (exp.role, have, have if kept else want, None if kept else best)
            pending[key] = kept and have != want
        count[key] = count.get(key, 0) + 1
    peers = tuple(
        Peer(role, count[k], have, want, best) for k, (role, have, want, best) in seen.items()
    )
    outside += sum(count[k] for k, p in pending.items() if p)
    return Paths(peers, router_nets, outside)


def _resolve(
    routes: Iterable[tuple[str, str]], state: HostState | None, live_of: Mapping[str, str]
) -> frozenset[Hop]:
    out: set[Hop] = set()
    peers = state.peers if state is not None else {}
    for net, gw in routes:
        router = live_of.get(gw)
        if router is None:
            router = next((live_of[a] for a in sorted(peers.get(gw, ())) if a in live_of), None)
        out.add((net, router or "?" + gw, gw))
    return frozenset(out)


def drain_plan(
    paths: Paths | None,
    candidates: Iterable[str],
    readdressed: frozenset[str],
    later: frozenset[str],
) -> DrainPlan:
    """Which of ``candidates`` (in the order given) can be drained; see the module docstring.
    ``readdressed``: routers whose address changes; ``later``: gateway NIDs that exist only
    after that change (routes through them are added after it).  Without ``paths`` (a result
    built by hand) nothing can be shown safe, and nothing is drained.

    A router that keeps its address (it only loses routes or nets) is drained only while no
    host loses more than half of its planned gateways to a net at the best priority
    (``Peer.best``), as the reload waves are limited (``reload_waves``): draining all the
    primaries of a net puts its traffic on the backups for the whole change, where leaving
    such a router forwarding is safe -- its peers' routes through it go first, and a
    ``route del`` moves their traffic at once.  A readdressed router is drained whenever a
    gateway stays (not draining it would drop what it forwards while it restarts)."""
    if paths is None:
        return DrainPlan(frozenset(), {r: () for r in readdressed})
    # (peer, net) -> (routers usable as a gateway throughout, routers used at some moment)
    pairs: list[tuple[frozenset[str], frozenset[str], str]] = []
    primaries: list[frozenset[str]] = []  # per pair: the planned gateways at the best priority
    by_router: dict[str, list[int]] = {}
    nets_of = paths.router_nets
    for p in paths.peers:
        for net in sorted({n for n, _r, _g in p.want}):
            usable = frozenset(
                r
                for n, r, g in p.want
                if n == net
                and r not in readdressed
                and g not in later
                and net in nets_of.get(r, ())
                and _net_of(g) in nets_of.get(r, ())
            )
            used = frozenset(r for n, r, _g in p.live | p.want if n == net)
            i = len(pairs)
            pairs.append((usable, used, net))
            best = p.want if p.best is None else p.best
            primaries.append(frozenset(r for n, r, _g in best if n == net))
            for r in usable | used:
                by_router.setdefault(r, []).append(i)

    def holds(i: int, drained: frozenset[str]) -> bool:
        usable, used, _net = pairs[i]
        return not (used & drained) or bool(usable - drained)

    def half(i: int, drained: frozenset[str]) -> bool:
        best = primaries[i]
        return len(best & drained) <= len(best) // 2

    drained: frozenset[str] = frozenset()
    for r in candidates:
        trial = drained | {r}
        kept = r in readdressed or all(half(i, trial) for i in by_router.get(r, ()))
        if kept and all(holds(i, trial) for i in by_router.get(r, ())):
            drained = trial
    lonely = {
        r: tuple(
            sorted(
                {
                    pairs[i][2]
                    for i in by_router.get(r, ())
                    if r in pairs[i][1] and not (pairs[i][0] - drained - {r})
                }
            )
        )
        for r in sorted(readdressed - drained)
    }
    return DrainPlan(drained, lonely)


def sole_gateway_nets(paths: Paths, routers: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Per router of ``routers``: the nets it is the only planned gateway to for some host
    (client or server), sorted; empty when every host routing through it to a net has another
    router to that net.  Reloading LNet on such a router cuts those hosts off from those nets
    until it is back, and draining it first (``lnetctl set routing 0``) only cuts them sooner
    (see the module docstring): no peer has another gateway to turn to.  The planned routes
    are those that are in place when the plan's changes are done."""
    wanted = set(routers)
    out: dict[str, set[str]] = {r: set() for r in wanted}
    for p in paths.peers:
        by_net: dict[str, set[str]] = {}
        for net, router, _g in p.want:
            by_net.setdefault(net, set()).add(router)
        for net, via in by_net.items():
            if len(via) == 1 and (only := next(iter(via))) in wanted:
                out[only].add(net)
    return {r: tuple(sorted(nets, key=natural)) for r, nets in sorted(out.items())}


def reload_waves(paths: Paths, routers: Iterable[str]) -> list[list[str]]:
    """``routers`` (each of which every host routing through it can do without: no net it is
    the only gateway to, ``sole_gateway_nets``) in waves to reload one after the other: no
    wave holds more than half of any host's gateways to one net **at the best priority**
    (``Peer.best``: the ones LNet uses; a backup group carries nothing while one primary
    lives), so each host keeps at least half of its primaries -- and the bandwidth they carry
    -- up while a wave reloads.  A net with a single primary (and backups, or it would be a
    sole gateway) falls back to its backups while that router reloads, whatever the wave.

    Half and not "all but one": a wave that leaves a net one gateway of six puts the whole
    net's traffic on it for the length of the reload.  Routers are taken in name order, each
    into the first wave it fits; a site whose nets have two or more primaries each usually
    needs two waves.  Gateways that are not in ``routers`` stay up throughout and count as
    kept.  A wave starts only when the one before forwards again (the step says so)."""
    wanted = sorted(set(routers), key=natural)
    if not wanted:
        return []
    chosen = frozenset(wanted)
    sets: dict[frozenset[str], int] = {}  # gateway set -> how many of it a wave may take
    for p in paths.peers:
        by_net: dict[str, set[str]] = {}
        for net, router, _g in p.want if p.best is None else p.best:
            by_net.setdefault(net, set()).add(router)
        for via in by_net.values():
            gateways = frozenset(via)
            if gateways & chosen and gateways not in sets:
                sets[gateways] = max(1, len(gateways) // 2)
    of_router: dict[str, list[frozenset[str]]] = {}
    for gateways in sets:
        for r in gateways & chosen:
            of_router.setdefault(r, []).append(gateways)
    waves: list[set[str]] = []
    for r in wanted:
        for wave in waves:
            if all(len(g & wave) < sets[g] for g in of_router.get(r, ())):
                wave.add(r)
                break
        else:
            waves.append({r})
    return [sorted(w, key=natural) for w in waves]
