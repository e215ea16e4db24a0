"""The pair proofs of one file system: every client class reaches every server (its client
NIDs) and the MGS NIDs, every server reaches every other server and every client class, the two
ends of a routed pair use the same routers, and every route of an endpoint in scope is sound.

A destination NID counts only when its host has an NI on its net (``reach.owned``): a route to
the net is not enough, nothing answers there.  A pair whose destination has no such NID left
fails, reported at the destination's file (``V-NID-NO-NI``, naming the senders and the NIDs
tried); a NID dropped so is named in the sender's failure when the others fail too.

Failures are reported per sender (file) and cause, listing the destinations, so a site whose
servers cannot reach each other gets one finding per server, not one per pair.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from lnetgen import nodes
from lnetgen.progress import Tick, counted
from lnetgen.verify.findings import KINDS, Collector, Count
from lnetgen.verify.locate import Locator
from lnetgen.verify.manifest import FileSystem, Manifest, Server
from lnetgen.verify.reach import BACKUP, DIRECT, HOLD, NONE, Prover, Reach, net_of, owned
from lnetgen.verify.rules import dead_rules, idle_rules
from lnetgen.verify.world import Endpoint, World


@dataclass
class _Failure:
    """Destinations one sender fails (or only reaches at a worse priority) for one cause."""

    dests: set[str] = field(default_factory=set)
    nets: set[str] = field(default_factory=set)
    #: NIDs of the destinations not tried: their host has no NI on their net
    dead: set[str] = field(default_factory=set)


def _dead(ep: Endpoint, nids: tuple[str, ...]) -> tuple[str, ...]:
    """``nids`` of ``ep`` on a net it has no NI on, each with why (for a message)."""
    return tuple(f"{n} ({ep.name} has no NI on {net_of(n)})" for n in nids)


def _shown(items: list[str], limit: int = 6) -> str:
    more = len(items) - limit
    return ", ".join(items[:limit]) + (f" and {more} more" if more > 0 else "")


@dataclass
class FsProof:
    """The endpoints of one file system and what was proved about them."""

    fs: FileSystem
    servers: list[tuple[Server, Endpoint]]
    clients: list[Endpoint]
    counts: dict[str, Count] = field(default_factory=lambda: {k: Count() for k in KINDS})
    #: (client endpoint, nets of a server's client NIDs) -> the index in the server's
    #: ``client_nids`` of the NID proved reachable, where it is not the first (read through
    #: ``picks``).  Which NID a client uses depends on the server only through those nets, so
    #: this holds one entry per client and kind of server, not one per pair, and none where
    #: every client reaches the first NID.
    client_pick: dict[tuple[str, tuple[str, ...]], int] = field(default_factory=dict)
    #: (server, other server) -> the NID of the other server proved reachable
    server_nid: dict[tuple[str, str], str] = field(default_factory=dict)

    @functools.cached_property
    def client_nets(self) -> list[tuple[str, ...]]:
        """The nets of each server's client NIDs (in ``servers`` order), computed once for
        every use; servers with the same nets share one tuple."""
        seen: dict[tuple[str, ...], tuple[str, ...]] = {}
        return [
            seen.setdefault(nets, nets)
            for nets in (tuple(net_of(n) for n in s.client_nids) for s, _ep in self.servers)
        ]

    @functools.cached_property
    def nid_kinds(self) -> list[tuple[str, ...]]:
        """The kinds of server a client picks a client NID of alike: the nets of their
        client NIDs, in order of first server."""
        return list(dict.fromkeys(self.client_nets))

    @functools.cached_property
    def server_kinds(self) -> list[int]:
        """The index in ``nid_kinds`` of each server (in ``servers`` order)."""
        index = {k: i for i, k in enumerate(self.nid_kinds)}
        return [index[nets] for nets in self.client_nets]

    def picks(self, client: str) -> tuple[int, ...]:
        """For each of ``nid_kinds``, the index of the client NID that ``client`` was proved to
        reach in the ``client_nids`` of such a server: 0 where it reaches the first, or none."""
        pick = self.client_pick
        if not pick:
            return (0,) * len(self.nid_kinds)
        return tuple(pick.get((client, k), 0) for k in self.nid_kinds)


def _folded(names: set[str]) -> str:
    """``names`` as one folded node set; a plain list when one is not a host name (the
    groups of live clients, ``clients-gni#2``)."""
    if all(nodes.HOSTNAME_RE.match(n) for n in names):
        return nodes.fold(sorted(names))
    return ", ".join(sorted(names))


#: A server as another server reaches it: its NIDs on nets it has an NI on, and the others.
_Peer = tuple[Server, Endpoint, tuple[str, ...], tuple[str, ...]]

#: Servers a client reaches alike (``_alike_servers``) and the nets of their client NIDs.
_Alike = tuple[tuple[str, ...], list[tuple[Server, Endpoint]]]


def _alike_servers(p: FsProof) -> list[_Alike]:
    """Servers a client reaches alike: the same nets for their client NIDs, the same NIs and
    the same parsed route table (shared through the parse cache), in order of first member,
    each group with those nets.  What a client-to-server proof reads of the server is only
    these."""
    groups: dict[tuple[object, ...], _Alike] = {}
    for (s, sep), nets in zip(p.servers, p.client_nets, strict=True):
        routes = sep.state.routes
        known = sep.state.nets is not None  # NIs not shown: every client NID is tried
        key = (nets, sep.nets, known, sep.role, id(routes) if routes is not None else None)
        groups.setdefault(key, (nets, []))[1].append((s, sep))
    return list(groups.values())


def _status(r: Reach | None) -> str:
    if r is None or not r.ok:
        return "fail"
    return "backup" if r.status == BACKUP else "hold"


class FailureLog:
    """The pair failures of a proof, gathered and reported one finding per sender, kind and
    cause (and per destination without a NID to try)."""

    def __init__(self, world: World, out: Collector, loc: Locator) -> None:
        self.world, self.out, self.loc = world, out, loc
        self._failures: dict[tuple[str, str, str], _Failure] = {}
        #: (destination, kind) -> the senders (``dests``) that have no NID of it to try, and
        #: the NIDs they would have used (``nets``)
        self._unowned: dict[tuple[str, str], _Failure] = {}

    def fail(
        self,
        sender: Endpoint,
        kind: str,
        r: Reach | None,
        dest: str,
        net: str,
        dead: tuple[str, ...] = (),
    ) -> None:
        code = (
            "V-BACKUP-ONLY"
            if r is not None and r.status == BACKUP
            else ("V-NO-ROUTE" if r is None or r.status == NONE else "V-UNREACHABLE")
        )
        f = self._failures.setdefault((sender.name, kind, code), _Failure())
        f.dests.add(dest)
        f.nets.add(net)
        f.dead.update(dead)

    def no_nid(self, sender: Endpoint, kind: str, dest: Endpoint, nids: tuple[str, ...]) -> None:
        """``sender`` has no NID of ``dest`` to try: every one it may use (``nids``) is on a
        net ``dest`` has no NI on.  The pair fails; reported at ``dest``'s file."""
        f = self._unowned.setdefault((dest.name, kind), _Failure())
        f.dests.add(sender.name)
        f.nets.update(nids)

    def flush(self) -> None:
        """Report the failures gathered, one finding per sender, kind and cause."""
        for (name, kind, code), f in sorted(self._failures.items()):
            ep = self.world.endpoints[name]
            nets = sorted(f.nets)
            shown = _shown(nets)
            dests = _folded(f.dests)
            who = ep.name if ep.hosts == ep.name else f"{ep.name} ({ep.hosts})"
            if code == "V-NO-ROUTE":
                why = f"no NI on and no route to {shown}"
                place = self.loc.section(ep.file, "route")
                if not place.line:
                    place = self.loc.section(ep.file, "net")
            elif code == "V-UNREACHABLE":
                why = f"no working route to {shown} (see the route findings)"
                place = self.loc.route(ep.file, nets[0], "")
            else:
                why = f"only backup routes work to {shown}"
                place = self.loc.route(ep.file, nets[0], "")
            if f.dead:
                why += f"; not tried: {_shown(sorted(f.dead), 4)}"
            self.out.add(
                code,
                ep.file,
                place.line,
                place.col,
                place.path,
                f"{kind}: {who} cannot reach {dests}: {why}"
                if code != "V-BACKUP-ONLY"
                else f"{kind}: {who} reaches {dests} only at a worse priority: {why}",
            )
        self._failures.clear()
        for (name, kind), f in sorted(self._unowned.items()):
            ep = self.world.endpoints[name]
            place = self.loc.section(ep.file, "net")
            self.out.add(
                "V-NID-NO-NI",
                ep.file,
                place.line,
                place.col,
                place.path,
                f"{kind}: {_folded(f.dests)} cannot reach {name}: {name} has no NI on the net "
                f"of any NID they may use ({_shown(sorted(f.nets))})",
            )
        self._unowned.clear()


class PairChecker:
    """Runs the pair proofs and reports into a ``Collector``."""

    def __init__(
        self, world: World, manifest: Manifest, prover: Prover, out: Collector, loc: Locator
    ) -> None:
        self.world, self.manifest, self.prover, self.out, self.loc = (
            world,
            manifest,
            prover,
            out,
            loc,
        )
        self.failures = FailureLog(world, out, loc)
        self._routes_done: set[str] = set()
        self._symmetry_done: set[tuple[str, str, str, str]] = set()
        self._symmetric_ok: set[tuple[str, str, str, frozenset[str]]] = set()

    def flush(self) -> None:
        """Report the pair failures gathered (``FailureLog.flush``)."""
        self.failures.flush()

    def routes(self, ep: Endpoint) -> None:
        """Report what is wrong with each route of ``ep`` (once per endpoint)."""
        if ep.name in self._routes_done:
            return
        self._routes_done.add(ep.name)
        if not ep.nets:
            place = self.loc.section(ep.file, "net")
            self.out.add(
                "V-NO-NI",
                ep.file,
                place.line,
                place.col,
                place.path,
                f"{ep.name} ({ep.role}) configures no NI",
            )
        dead_rules(ep, self.out)
        idle_rules(self.loc, self.out, ep, self.prover.verdicts(ep))
        for net, way in self.prover.ways(ep).items():  # in net order
            if way.clean and net not in ep.nets:
                continue  # nothing to report
            for v in way.reach.routes:
                if net in ep.nets:
                    place = self.loc.route(ep.file, net, v.gateway)
                    self.out.add(
                        "V-ROUTE-LOCAL",
                        ep.file,
                        place.line,
                        place.col,
                        place.path,
                        f"route to {net} via {v.gateway}: {ep.name} has an NI on {net}",
                    )
                for code, message in v.problems:
                    self._route_problem(ep, v.net, v.gateway, v.router, code, message)

    def _route_problem(
        self, ep: Endpoint, net: str, gw: str, router: str | None, code: str, message: str
    ) -> None:
        gw_ep = self.world.by_host.get(router) if router is not None else None
        if code == "V-GW-NOT-ROUTER" and gw_ep is not None and gw_ep.role == "router":
            # the router's file is what is wrong: it lost its `routing: enable`
            place = self.loc.section(gw_ep.file, "routing")
            if not place.line:
                place = self.loc.section(gw_ep.file, "net")
            self.out.add(
                code,
                gw_ep.file,
                place.line,
                place.col,
                place.path,
                f"router {router} does not forward (routing not enabled), yet routes use it as "
                "a gateway",
            )
            return
        place = self.loc.route(ep.file, net, gw)
        self.out.add(code, ep.file, place.line, place.col, place.path, f"{ep.name}: {message}")

    # ---------------------------------------------------------------- symmetry

    def symmetric(self, a: Endpoint, ra: Reach, b: Endpoint) -> None:
        """``a`` reaches ``b``'s net through routers (``ra``): ``b`` must route back to ``a``'s
        gateway-side net through exactly those routers, and only those."""
        via = self.prover.gateway_routers(a, ra)
        for local in sorted(via.keys() & a.nets):
            if local in b.nets:
                continue
            mine = via[local]
            # whether b's way back matches depends on a only through ``mine``: a verdict
            # without findings is shared by every sender with the same routers
            held = (ra.net, local, b.name, mine)
            if held in self._symmetric_ok:
                continue
            key = (a.name, ra.net, b.name, local)
            if key in self._symmetry_done:
                continue
            self._symmetry_done.add(key)
            back = self.prover.reach(b, local)
            theirs = self.prover.routers_via(b, back, ra.net)
            if not back.ok:
                continue  # the return path itself fails: reported as a pair failure
            if mine == theirs:
                self._symmetric_ok.add(held)
                continue
            for rtr in sorted(mine - theirs):
                place = self.loc.route(b.file, local, "")
                self.out.add(
                    "V-ASYMMETRIC",
                    b.file,
                    place.line,
                    place.col,
                    place.path,
                    f"{a.name} reaches {ra.net} through {rtr}, but {b.name} has no route to "
                    f"{local} through {rtr}: with drop_asym_route {b.name} drops what arrives "
                    f"through it",
                )
            for v in back.routes:
                if v.router in theirs - mine and net_of(v.gateway) == ra.net:
                    place = self.loc.route(b.file, local, v.gateway)
                    self.out.add(
                        "V-ASYMMETRIC",
                        b.file,
                        place.line,
                        place.col,
                        place.path,
                        f"{b.name} routes to {local} through {v.router} ({v.gateway}), which "
                        f"{a.name} does not use for {ra.net}: with drop_asym_route {a.name} "
                        "drops the replies",
                    )

    # ---------------------------------------------------------------- pairs

    def prove(self, p: FsProof, tick: Tick = lambda: None) -> None:
        """All pairs of one file system; ``tick`` once per client endpoint proved."""
        scoped = self.world.in_scope
        for ep in p.clients + [e for _s, e in p.servers]:
            if scoped(ep):
                self.routes(ep)
        alike = _alike_servers(p)
        # the servers in scope of each group, for a client out of scope
        alike_scoped = [
            (nets, [(s, sep) for s, sep in members if scoped(sep)]) for nets, members in alike
        ]
        for c in counted(p.clients, tick):
            for nets, members in alike if scoped(c) else alike_scoped:
                if members:
                    self._client_to_servers(p, c, nets, members)
        by_nets: dict[tuple[tuple[str, ...], tuple[str, ...]], list[_Peer]] = {}
        for b_spec, b in p.servers:
            live, dead = owned(b, b_spec.nids)
            key = (tuple(net_of(n) for n in live), tuple(net_of(n) for n in dead))
            by_nets.setdefault(key, []).append((b_spec, b, live, dead))
        # a server reaches every client with the same NI nets alike
        by_client_nets: dict[tuple[str, ...], list[Endpoint]] = {}
        for c in p.clients:
            by_client_nets.setdefault(tuple(f"0@{n}" for n in sorted(c.nets)), []).append(c)
        for _a_spec, a in p.servers:
            self._server_to_servers(p, a, by_nets)
            for nets, clients in by_client_nets.items():
                asked = clients if scoped(a) else [c for c in clients if scoped(c)]
                if not asked:
                    continue
                _nid, r = self.prover.reach_any(a, nets)
                p.counts[KINDS[2]].add(_status(r), len(asked))
                if r is None or not r.ok or r.status == BACKUP:
                    for c in asked:
                        self.failures.fail(
                            a, KINDS[2], r, c.name, r.net if r else "(no client net)"
                        )

    def _server_to_servers(
        self,
        p: FsProof,
        a: Endpoint,
        by_nets: dict[tuple[tuple[str, ...], tuple[str, ...]], list[_Peer]],
    ) -> None:
        """``a`` reaches every other server (any of its NIDs its host has an NI for:
        ``owned``); servers whose NIDs are on the same nets, with the same NIs, are reached
        alike, so each such group is judged once."""
        scoped = self.world.in_scope
        for members in by_nets.values():
            others = [m for m in members if m[1] is not a and (scoped(a) or scoped(m[1]))]
            if not others:
                continue
            first = others[0][2]
            if not first:  # no NID of theirs is on a net they have an NI on
                p.counts[KINDS[1]].add("fail", len(others))
                for b_spec, b, _live, _gone in others:
                    self.failures.no_nid(a, KINDS[1], b, b_spec.nids)
                continue
            nid, r = self.prover.reach_any(a, first)
            index = first.index(nid) if nid else 0
            status = _status(r)
            p.counts[KINDS[1]].add(status, len(others))
            for b_spec, b, live, dead in others:
                if status != "hold":
                    self.failures.fail(a, KINDS[1], r, b.name, net_of(live[index]), _dead(b, dead))
                if r is not None and r.ok:
                    p.server_nid[(a.hosts, b_spec.name)] = live[index]
                    if r.status != DIRECT:
                        self.symmetric(a, r, b)

    def _client_to_servers(
        self,
        p: FsProof,
        c: Endpoint,
        nets: tuple[str, ...],
        members: list[tuple[Server, Endpoint]],
    ) -> None:
        """``c`` against servers that are alike for it (``_alike_servers``), their client NIDs
        on ``nets``: the first is proved; when that holds without a finding, the others hold
        the same way (their NID at the same index); otherwise each is proved on its own, so
        findings name each server."""
        s0, sep0 = members[0]
        before = self.out.calls
        status = self._client_to_server(p, c, s0, sep0, nets)
        if status != "hold" or self.out.calls != before:
            for s, sep in members[1:]:
                self._client_to_server(p, c, s, sep, nets)
            return
        # the others have the nets of s0's client NIDs: ``p.client_pick`` already holds them
        p.counts[KINDS[0]].add(status, len(members) - 1)

    def _client_to_server(
        self, p: FsProof, c: Endpoint, s: Server, sep: Endpoint, nets: tuple[str, ...]
    ) -> str:
        """Prove ``c`` -> ``s``, the nets of whose client NIDs are ``nets``: the status; the
        NID used goes to ``p.client_pick`` unless it is the first.  Only the client NIDs on a
        net ``s`` has an NI on are tried (``owned``)."""
        reach = self.prover.reach
        live, dead = owned(sep, s.client_nids)
        if not live:
            p.counts[KINDS[0]].add("fail")
            self.failures.no_nid(c, KINDS[0], sep, s.client_nids)
            return "fail"
        results = [(nid, reach(c, net_of(nid))) for nid in live]
        if results and all(r.status in (DIRECT, HOLD) for _nid, r in results):
            # the common case of what follows: the first NID is used, nothing to report
            r = results[0][1]
            p.counts[KINDS[0]].add("hold")
            if r.status != DIRECT:
                self.symmetric(c, r, sep)
            return "hold"
        good = [(nid, r) for nid, r in results if r.status in (DIRECT, HOLD)]
        usable = good or [(nid, r) for nid, r in results if r.ok]
        status = _status(usable[0][1]) if usable else "fail"
        p.counts[KINDS[0]].add(status)
        index = s.client_nids.index(usable[0][0]) if usable else -1
        if index > 0:
            p.client_pick[(c.name, nets)] = index
        if usable and usable[0][1].status != DIRECT:
            self.symmetric(c, usable[0][1], sep)
        if not good:
            nid, r = usable[0] if usable else results[0]
            self.failures.fail(c, KINDS[0], r, s.name, r.net, _dead(sep, dead))
        for nid, r in results:
            if usable and not r.ok:
                place = self.loc.route(c.file, r.net, "")
                self.out.add(
                    "V-CLIENT-NID",
                    c.file,
                    place.line,
                    place.col,
                    place.path,
                    f"{c.name} cannot reach {nid}, a client NID of {s.name} (it reaches "
                    f"{usable[0][0]})",
                )
        return status


def _unanswered(world: World, nid: str) -> str:
    """Why nothing answers at ``nid``, or "": its host has no NI on its net (``owned``)."""
    owner = world.nid_owner.get(nid)
    ep = world.by_host.get(owner) if owner is not None else None
    if ep is None or not owned(ep, (nid,))[1]:
        return ""
    return f"{ep.name} has no NI on {net_of(nid)} ({ep.file})"


def mount(checker: PairChecker, p: FsProof) -> None:
    """Every client class of ``p`` reaches every MGS NID it mounts from (a check of the
    file system, not of a pair: outside ``PairChecker``, which it reads): a route to the
    NID's net, and an NI of its host on that net -- one finding per NID when that NI is
    missing, since no client reaches it then."""
    world = checker.world
    dead = {nid: _unanswered(world, nid) for nid in p.fs.mgs_nids}
    for c in p.clients:
        if not world.in_scope(c):
            continue
        for nid in p.fs.mgs_nids:
            r = checker.prover.reach(c, net_of(nid))
            if r.ok and not dead[nid]:
                continue
            line = checker.manifest.line_of(
                '"filesystems"', f'"{p.fs.name}":', '"mgs_nids"', f'"{nid}"'
            )
            checker.out.add(
                "V-MOUNT-UNREACHABLE",
                checker.manifest.path,
                line,
                1,
                f"$.filesystems.{p.fs.name}.mgs_nids",
                f"{p.fs.name}: clients mount from {nid}, but {dead[nid]}: no client reaches it"
                if dead[nid]
                else f"{p.fs.name}: clients mount from {nid}, but {c.name} ({c.hosts}) has no "
                f"working route to {net_of(nid)} ({c.file})",
            )
