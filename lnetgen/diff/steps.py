"""The changes of a diff as ordered ``lnetctl`` steps per node set (``plan_changes``).

The order keeps every file system reachable while the change rolls out -- every client net
keeps a working gateway to every server, both ways -- and says which steps cannot:

1. networks added on routers, routing enabled where it is off; networks added on servers and
   clients (a new NID nobody uses yet);
2. new routes: servers' first (return paths), then clients', then UDSP rules; changed routes
   replaced.  Routes through an address a router does not have yet (it is readdressed below)
   wait until it has it;
3. servers whose NID changes -- a new address, or a storage net they leave (a net moved or
   renumbered: ``10.36.2.4@o2ib4`` becomes ``10.36.2.4@o2ib3``) -- in one outage step: their
   targets are registered under the old NID in the MGS configuration logs, so the file system
   is stopped (the MGS replaces NIDs only when it runs alone, ``REPLACE_NIDS``), the old net
   deleted, the NIDs replaced (``lctl replace_nids`` or a writeconf) and the file system
   started again; the routes to the new NID are in place by then, and the
   paths to the old one may go afterwards;
4. routers drained (``lnetctl set routing 0``) only where ``lnetgen.diff.paths.drain_plan``
   shows that everyone routing through them keeps another gateway: a drained router drops
   what it is given to forward at once, and its peers turn away only at their next router
   ping, so draining the only gateway of a net cuts it off;
5. old routes removed on clients, then on servers (a peer's ``route del`` moves its traffic at
   once), then the routers' old routes and networks, which nobody routes through any more;
6. routers and clients readdressed (outside LNet; LNet restarts to take the address): a
   drained router is out of every path by then and comes back with routing still off; routes
   through its new address are added (servers, then clients), the ones through the old
   address removed, and only then is routing enabled again on the drained routers.  A router
   that could not be drained takes down the paths it alone carries while it restarts, and its
   step says so;
7. routing disabled on hosts that are no routers, once no route goes through them; old
   networks removed on clients (and servers' extra interfaces); tunables last.  A tunable that
   needs LNet reloaded is an outage of its host; a router is drained for it only where every
   host keeps another gateway to its nets, else its reload is a file system outage for the
   nets it alone serves (``lnetgen.diff.tunable_steps``).

A command holds values of the live dumps (the interfaces a net is to lose), which nothing but
the host checked: each argument is quoted for a POSIX shell (an interface ``x; reboot`` stays
one argument of ``lnetctl``; names of letters, digits and ``@%+=:,./-`` are left as they are),
and a command with a character that does not print (a control character, a bidi override that
shows the line other than it runs) is not given to run: it becomes a ``#`` comment saying so,
its text escaped (``refused``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from lnetgen import nodes
from lnetgen.diagnostics import printable
from lnetgen.diff.outages import (
    HOST_NID_OUTAGE,
    MOVING_ADDS_OUTAGE,
    ROUTER_CUT_OUTAGE,
    ROUTER_NID_OUTAGE,
    ROUTER_UNKNOWN_OUTAGE,
    SERVER_NET_OUTAGE,
    SERVER_NID_OUTAGE,
)
from lnetgen.diff.paths import drain_plan, reload_waves, sole_gateway_nets
from lnetgen.diff.result import (
    CLIENT,
    ROUTER,
    SERVER,
    DiffResult,
    HostDiff,
    natural,
    role_rank,
)
from lnetgen.diff.tunable_steps import RELOAD_ROUTER, reload_outage, reload_tunables, tunable_sets
from lnetgen.live import UNDEFINED_HOP


@dataclass(frozen=True)
class Step:
    """One ordered step: run ``commands`` on every host of ``hosts``."""

    number: int
    title: str
    hosts: str
    count: int
    commands: tuple[str, ...]
    outage: str = ""  # empty: runs live; else what the step interrupts and why


#: Said after each drain: what it drops meanwhile is resent through the other gateways.
DRAIN_WAIT = (
    "# then wait until the peers stop choosing it: they see routing off at their next router "
    "ping (alive_router_check_interval, 60 s by default)"
)
#: The note after the steps when a server leaves a net (a storage net renumbered).
KEEP_NETS_HINT = (
    "# servers leave their storage nets above, a file system outage each: when only the "
    "inventory's order changed (a server or router removed or added), `lnetgen solve SITE "
    "--keep-nets OLD_PLAN --out plan.json` keeps every net the deployed plan gave a server "
    "and moves routers instead; compare with `lnetgen diff SITE --plan plan.json --live PATH "
    "--plan-changes`.  A plan already solved so keeps the nets' names by group, not their "
    "servers: under `groups`, servers that still move are regrouped (docs/diff.md)"
)


#: The comment a command with a character that does not print becomes (its text escaped).
REFUSED = "# refused: a value of the live dump here holds characters that do not print: "


def _q(value: object) -> str:
    """One argument of a command, quoted for a POSIX shell when it needs it."""
    return shlex.quote(str(value))


def refused(command: str) -> str:
    """``command`` when all of it prints; else the ``REFUSED`` comment showing it escaped."""
    return command if command.isprintable() else REFUSED + printable(command)


def route_add(net: str, gateway: str, hop: int, priority: int) -> str:
    hop_opt = f" --hop {hop}" if hop != UNDEFINED_HOP else ""
    return (
        f"lnetctl route add --net {_q(net)} --gateway {_q(gateway)}{hop_opt} --priority {priority}"
    )


def route_del(net: str, gateway: str) -> str:
    return f"lnetctl route del --net {_q(net)} --gateway {_q(gateway)}"


def _net_add(net: str, ifaces: Iterable[str]) -> str:
    ifs = ",".join(ifaces)
    return f"lnetctl net add --net {_q(net)}" + (f" --if {_q(ifs)}" if ifs else "")


def _adds_nets(d: HostDiff) -> list[str]:
    out = [_net_add(n, i) for n, i in d.add_nets]
    for net, have, want in d.change_nets:
        new = [i for i in want if i not in have]
        if new:
            out.append(_net_add(net, new))
    return out


def _removes_nets(d: HostDiff) -> list[str]:
    return _interfaces_going(d) + [f"lnetctl net del --net {_q(n)}" for n, _i in d.remove_nets]


def _nid_notes(d: HostDiff) -> list[str]:
    return [
        f"# {net}: the interface gives NID {', '.join(have)}; the inventory says {nid} "
        "(set the interface address; LNet takes the NID from it)"
        for net, have, nid in d.nids
    ]


def _route_adds(d: HostDiff) -> list[str]:
    return [route_add(*r) for r in d.add_routes]


def _route_dels(d: HostDiff) -> list[str]:
    return [route_del(r[0], r[1]) for r in d.remove_routes]


def _route_replaces(d: HostDiff) -> list[str]:
    return [
        c
        for r in d.change_routes
        for c in (route_del(r[0], r[1]), route_add(r[0], r[1], r[4], r[5]))
    ]


def _udsp_adds(d: HostDiff) -> list[str]:
    """A router rule without ``--priority``: with it the kernel never applies the rule
    (``lnetgen.udsp``)."""
    return [
        "lnetctl udsp add "
        + " ".join(
            f"--{k} {_q(v)}" for k, v in (("src", r.src), ("dst", r.dst), ("rte", r.rte)) if v
        )
        + (f" --priority {r.priority}" if r.priority is not None else "")
        for r in d.add_udsp
    ]


def _udsp_dels(d: HostDiff) -> list[str]:
    """Highest position first: deleting a rule moves the ones after it up."""
    return [f"lnetctl udsp del --idx {i}" for i, _ in sorted(d.remove_udsp, reverse=True)]


def _interfaces_going(d: HostDiff) -> list[str]:
    return [
        f"lnetctl net del --net {_q(net)} --if {_q(i)}"
        for net, have, want in d.change_nets
        for i in have
        if i not in want
    ]


def _server_nid_change(d: HostDiff) -> list[str]:
    """The NID changes of a server: addresses fixed outside LNet, nets it leaves deleted."""
    return [
        *_nid_notes(d),
        *(
            f"# {net}: the server's NID there goes; its targets come back under its NIDs on "
            + (", ".join(n for n, _i in d.add_nets) or "its other nets")
            for net, _i in d.remove_nets
        ),
        *(f"lnetctl net del --net {_q(net)}" for net, _i in d.remove_nets),
    ]


@dataclass(frozen=True)
class _Unit:
    """Hosts of one group that are planned alike: a router group is split into the routers
    that are drained and those that are not."""

    hosts: str
    count: int
    diff: HostDiff
    drained: bool = False
    #: a readdressed router that is not drained: the nets it alone serves to some host
    lonely: tuple[str, ...] = ()
    #: a router whose tunables need LNet reloaded: the nets it alone serves to some host
    #: (None: not known, the result has no paths)
    sole: tuple[str, ...] | None = ()
    #: (k, n): a router reloaded for its tunables in wave k of n (0, 0: not in waves)
    wave: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class _Ctx:
    """Addresses of the readdressed routers: routes through a new one are added once it
    exists, routes through an old one removed only then."""

    new: frozenset[str]
    old: frozenset[str]
    outside: int = 0  # Paths.outside: hosts out of --hosts whose routes or nets change too
    #: storage nets some server leaves (its NID changes in the outage step): clients' new
    #: routes to them wait for that outage (``_moving_adds``)
    moving: frozenset[str] = frozenset()


def _wants_drain(d: HostDiff) -> bool:
    """A forwarding router that loses routes, networks, interfaces or its address."""
    return (
        d.role == ROUTER
        and d.routing != "enable"
        and bool(d.remove_nets or d.remove_routes or d.nids or _interfaces_going(d))
    )


def _units(result: DiffResult) -> tuple[list[_Unit], _Ctx]:
    routers = [g for g in result.groups if g.diff.role == ROUTER]
    new = frozenset(nid for g in routers for _n, _h, nid in g.diff.nids)
    old = frozenset(h for g in routers for _n, have, _w in g.diff.nids for h in have) - new
    names = {
        g.hosts: nodes.expand(g.hosts)
        for g in routers
        if _wants_drain(g.diff) or g.diff.nids or reload_tunables(g.diff)
    }
    candidates = sorted(
        (n for g in routers if _wants_drain(g.diff) for n in names[g.hosts]), key=natural
    )
    readdressed = frozenset(n for g in routers if g.diff.nids for n in names[g.hosts])
    plan = drain_plan(result.paths, candidates, readdressed, new)
    reloading = [n for g in routers if reload_tunables(g.diff) for n in names[g.hosts]]
    sole = sole_gateway_nets(result.paths, reloading) if result.paths is not None else None
    waves = (
        reload_waves(result.paths, [n for n in reloading if not sole.get(n)])
        if result.paths is not None and sole is not None
        else []
    )
    wave_of = {n: (k, len(waves)) for k, w in enumerate(waves, 1) for n in w if len(waves) > 1}
    units: list[_Unit] = []
    for g in result.groups:
        if g.hosts not in names:
            units.append(_Unit(g.hosts, g.count, g.diff))
            continue
        parts: dict[
            tuple[bool, tuple[str, ...], tuple[str, ...] | None, tuple[int, int]], list[str]
        ] = {}
        for n in names[g.hosts]:
            alone = None if sole is None else sole.get(n, ())
            key = (n in plan.drained, plan.lonely.get(n, ()), alone, wave_of.get(n, (0, 0)))
            parts.setdefault(key, []).append(n)
        for (drained, lonely, alone, wave), hosts in parts.items():
            units.append(_Unit(nodes.fold(hosts), len(hosts), g.diff, drained, lonely, alone, wave))
    outside = result.paths.outside if result.paths is not None else 0
    moving = frozenset(
        n for g in result.groups if g.diff.role == SERVER for n, _i in g.diff.remove_nets
    )
    return units, _Ctx(new, old, outside, moving)


#: The commands one phase runs on a unit (none: it sits the phase out).
_Commands = Callable[[_Unit, _Ctx], list[str]]


def _on(role: str, commands: Callable[[HostDiff], list[str]]) -> _Commands:
    """``commands`` on hosts of ``role`` only."""
    return lambda u, _c: commands(u.diff) if u.diff.role == role else []


def _adds(role: str, later: bool) -> _Commands:
    """Route adds on ``role``: through addresses that exist now, or (``later``) through the
    readdressed routers' new ones.  A client's new route to a net some server leaves is not
    among them (``_moving_adds``)."""
    return lambda u, c: (
        [
            route_add(*r)
            for r in u.diff.add_routes
            if (r[1] in c.new) == later and not (role == CLIENT and not later and r[0] in c.moving)
        ]
        if u.diff.role == role
        else []
    )


def _moving_adds(u: _Unit, c: _Ctx) -> list[str]:
    """A client's new routes to a storage net some server leaves.  Added while the servers
    still on it have no route back through the new gateway, each request through it would
    be answered into a client that drops the reply (``drop_asym_route``) -- on a live file
    system.  So they are added in the servers' NID-change outage, the file system stopped."""
    if u.diff.role != CLIENT:
        return []
    return [route_add(*r) for r in u.diff.add_routes if r[0] in c.moving and r[1] not in c.new]


def _dels(role: str, later: bool) -> _Commands:
    """Route removals on ``role``: through other gateways, or (``later``) through the old
    addresses of the readdressed routers."""
    return lambda u, c: (
        [route_del(r[0], r[1]) for r in u.diff.remove_routes if (r[1] in c.old) == later]
        if u.diff.role == role
        else []
    )


def _router_removals(u: _Unit, _c: _Ctx) -> list[str]:
    return _route_dels(u.diff) + _removes_nets(u.diff) if u.diff.role == ROUTER else []


def _readdress(u: _Unit, _c: _Ctx) -> list[str]:
    return _nid_notes(u.diff) if u.diff.role != SERVER else []


def _leftover_nets(u: _Unit, _c: _Ctx) -> list[str]:
    """Old networks of clients; of servers only extra interfaces (a net a server leaves goes
    with its NID change)."""
    role = u.diff.role
    return (
        _removes_nets(u.diff)
        if role == CLIENT
        else _interfaces_going(u.diff)
        if role == SERVER
        else []
    )


def _readdress_outage(units: list[_Unit]) -> str:
    texts: dict[str, None] = {}
    for u in units:
        if u.diff.role != ROUTER:
            texts[HOST_NID_OUTAGE] = None
        elif u.drained:
            texts[ROUTER_NID_OUTAGE] = None
        elif u.lonely:
            texts[ROUTER_CUT_OUTAGE.format(nets=", ".join(u.lonely))] = None
        else:
            texts[ROUTER_UNKNOWN_OUTAGE] = None
    return "; ".join(texts)


def _set_tunables(u: _Unit, _c: _Ctx) -> list[str]:
    """The tunables' commands; a router that reloads in a wave (its peers keep other
    gateways) is drained first, with the commands to paste, and told how to reload."""
    cmds = tunable_sets(u.diff)
    if u.diff.role == ROUTER and u.wave[0] and reload_tunables(u.diff):
        return ["lnetctl set routing 0", DRAIN_WAIT, *cmds, RELOAD_ROUTER]
    return cmds


def _tunables_outage(units: list[_Unit]) -> str:
    """The reload outage of a tunables step: its routers are the only gateway to the same
    nets (``plan_changes`` keeps routers that are apart), or none is, or that is not known."""
    routers = [u.sole for u in units if u.diff.role == ROUTER]
    sole = None if None in routers else next((s for s in routers if s), ())
    wave = next((u.wave for u in units if u.wave[0]), (0, 0))
    return reload_outage((u.diff for u in units), sole, wave)


def _server_nid_outage(units: list[_Unit]) -> str:
    return SERVER_NET_OUTAGE if any(u.diff.remove_nets for u in units) else SERVER_NID_OUTAGE


#: (title, commands, outage of a step of these units: empty, it runs live), in order.
_PHASES: tuple[tuple[str, _Commands, Callable[[list[_Unit]], str] | None], ...] = (
    ("add networks on routers", _on(ROUTER, _adds_nets), None),
    (
        "enable routing on routers",
        lambda u, _c: ["lnetctl set routing 1"] if u.diff.routing == "enable" else [],
        None,
    ),
    (
        "add networks on servers and clients",
        lambda u, _c: _adds_nets(u.diff) if u.diff.role != ROUTER else [],
        None,
    ),
    ("add routes on servers (return paths before clients use them)", _adds(SERVER, False), None),
    ("add routes on clients", _adds(CLIENT, False), None),
    ("remove old UDSP rules on clients", _on(CLIENT, _udsp_dels), None),
    ("add UDSP rules on clients (after the routes they prefer)", _on(CLIENT, _udsp_adds), None),
    ("add routes on routers", _on(ROUTER, _route_adds), None),
    (
        "replace changed routes (LNet cannot change hop or priority in place)",
        lambda u, _c: _route_replaces(u.diff),
        None,
    ),
    (
        "add routes on clients to the nets servers leave (in the outage of the next step)",
        _moving_adds,
        lambda _us: MOVING_ADDS_OUTAGE,
    ),
    (
        "change servers' NIDs (their targets are registered under the old ones)",
        _on(SERVER, _server_nid_change),
        _server_nid_outage,
    ),
    (
        "drain routers whose peers keep other gateways",
        lambda u, _c: ["lnetctl set routing 0", DRAIN_WAIT] if u.drained else [],
        None,
    ),
    ("remove old routes on clients", _dels(CLIENT, False), None),
    ("remove old routes on servers", _dels(SERVER, False), None),
    ("remove old routes and networks on routers (no peer uses them there)", _router_removals, None),
    (
        "fix interface addresses on routers and clients (outside LNet)",
        _readdress,
        _readdress_outage,
    ),
    ("add routes through the new addresses on servers", _adds(SERVER, True), None),
    ("add routes through the new addresses on clients", _adds(CLIENT, True), None),
    ("remove routes through the old addresses on clients", _dels(CLIENT, True), None),
    ("remove routes through the old addresses on servers", _dels(SERVER, True), None),
    (
        "re-enable routing on drained routers",
        lambda u, _c: ["lnetctl set routing 1"] if u.drained else [],
        None,
    ),
    (
        "disable routing on hosts that are no routers (no route goes through them any more)",
        lambda u, _c: ["lnetctl set routing 0"] if u.diff.routing == "disable" else [],
        None,
    ),
    ("remove old networks on servers and clients", _leftover_nets, None),
    # last: drop_asym_route only once the routes on both sides are symmetric
    ("set LNet tunables", _set_tunables, _tunables_outage),
)


#: The phases that take a route, a network or a router's forwarding away: under --hosts, with
#: hosts outside the scope still to change, they may cut those hosts off.
_REMOVALS = frozenset(
    {
        "drain routers whose peers keep other gateways",
        "remove old routes on clients",
        "remove old routes on servers",
        "remove old routes and networks on routers (no peer uses them there)",
        "remove routes through the old addresses on clients",
        "remove routes through the old addresses on servers",
        "remove old networks on servers and clients",
    }
)


def _scope_outage(outside: int) -> str:
    """The outage of a removal planned for part of the site only."""
    return (
        f"file system outage (possible): --hosts leaves out {outside} host(s) whose routes or "
        "networks change too; no step of this plan changes them, so this removal may cut them "
        "off -- plan the whole site (without --hosts), or bring those hosts to the plan first"
    )


def plan_changes(result: DiffResult) -> list[Step]:
    """The changes of ``result`` as ordered lnetctl steps per node set (empty when equal).

    Within a step, hosts that run the same commands are merged into one node set -- but in
    the tunables step, routers that are the only gateway some hosts have to a net stay apart
    per such nets (their reload cuts those nets; the others' only needs a drain), and routers
    reloaded in waves (``lnetgen.diff.paths.reload_waves``) get a step per wave after the
    first, which also holds the clients, servers and the first wave.
    """
    units, ctx = _units(result)
    steps: list[Step] = []
    number = 0
    for title, make, outage_of in _PHASES:
        by_cmds: dict[tuple[int, tuple[str, ...], tuple[str, ...]], list[_Unit]] = {}
        for u in units:
            cmds = tuple(refused(c) for c in make(u, ctx))
            if cmds:
                tunables = make is _set_tunables
                apart = (u.sole or ()) if tunables else ()
                wave = max(u.wave[0], 1) if tunables else 1
                by_cmds.setdefault((wave, cmds, apart), []).append(u)
        for wave in sorted({w for w, _c, _a in by_cmds}):
            number += 1
            items = []
            for (w, cmds, _apart), us in by_cmds.items():
                if w != wave:
                    continue
                hosts = (
                    us[0].hosts
                    if len(us) == 1
                    else nodes.fold(n for u in us for n in nodes.expand(u.hosts))
                )
                role = min(role_rank(u.diff.role) for u in us)
                outage = outage_of(us) if outage_of else ""
                if (
                    not outage
                    and ctx.outside
                    and (title in _REMOVALS or any(u.drained for u in us))
                ):
                    outage = _scope_outage(ctx.outside)
                named = (
                    title if wave == 1 else f"{title} on routers, wave {wave} of {us[0].wave[1]}"
                )
                step = Step(number, named, hosts, sum(u.count for u in us), cmds, outage)
                items.append((role, natural(hosts), step))
            steps.extend(s for _r, _n, s in sorted(items, key=lambda t: (t[0], t[1])))
    return steps
