"""Compare a proposed plan with live state, fold hosts with identical changes, order the changes.

Both sides are normalized first (``lnetgen.live`` does the live side), then compared per host
(NAPALM ``compare_config`` style: an empty result means no change):

* routes keyed by (net, gateway NID): added, removed, or changed in hop/priority; a change
  needs ``lnetctl route del`` + ``route add`` since LNet cannot update a route in place.  A
  live gateway listed under another NID of the same router (discovery consolidates routes
  under a peer's primary NID) matches;
* networks added or removed, interfaces changed; NIDs that differ from the inventory's;
* routing enabled on routers and disabled elsewhere.

Hosts of the plan with no live dump are *missing*, dumped hosts the plan does not know are
*unknown*; unreadable dumps are errors.  ``plan_changes`` orders the work so that no host
loses a path while the change rolls out: new networks and routes first (routers, then servers'
return routes, then clients), routers drained (``lnetctl set routing 0``) before their routes
or networks go, removals last.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic
from lnetgen.live import UNDEFINED_HOP, HostState, LiveSet, RouteKey, RouteTable
from lnetgen.model import Site
from lnetgen.plan import Plan, Route

ROUTER, SERVER, CLIENT = "router", "server", "client"
_ROLE_ORDER = {ROUTER: 0, SERVER: 1, CLIENT: 2}

#: (net, gateway, hop, priority)
RouteEntry = tuple[str, str, int, int]
#: (net, gateway, live hop, live priority, proposed hop, proposed priority)
RouteChange = tuple[str, str, int, int, int, int]
#: (net, interfaces)
NetEntry = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class Expected:
    """What the plan wants on one host (the same objects are shared by a client class)."""

    role: str
    nets: Mapping[str, tuple[str, ...]]
    routes: Mapping[RouteKey, tuple[int, int]]
    routing: bool
    nids: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HostDiff:
    """The changes that would bring one host from its live state to the plan."""

    role: str
    add_nets: tuple[NetEntry, ...] = ()
    remove_nets: tuple[NetEntry, ...] = ()
    change_nets: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = ()  # live, proposed
    nids: tuple[tuple[str, tuple[str, ...], str], ...] = ()  # net, live NIDs, inventory NID
    add_routes: tuple[RouteEntry, ...] = ()
    remove_routes: tuple[RouteEntry, ...] = ()
    change_routes: tuple[RouteChange, ...] = ()
    routing: str = ""  # "enable" | "disable" | ""

    @property
    def empty(self) -> bool:
        return not (
            self.add_nets
            or self.remove_nets
            or self.change_nets
            or self.nids
            or self.add_routes
            or self.remove_routes
            or self.change_routes
            or self.routing
        )


@dataclass(frozen=True)
class Group:
    """Hosts (a folded node set) that need exactly the same changes."""

    hosts: str
    count: int
    diff: HostDiff


@dataclass
class DiffResult:
    """The comparison of a plan with a live PATH."""

    site: str
    strategy: str
    live_path: str
    generated: dict[str, str] | None = None
    groups: list[Group] = field(default_factory=list)
    equal: str = ""
    equal_count: int = 0
    missing: str = ""
    missing_count: int = 0
    unknown: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)
    error_hosts: str = ""
    health: list[tuple[str, int, str]] = field(default_factory=list)  # hosts, count, note

    @property
    def compared(self) -> int:
        return self.equal_count + sum(g.count for g in self.groups)

    @property
    def differs(self) -> bool:
        return bool(self.groups or self.missing_count or self.unknown or self.errors)

    @property
    def exit_code(self) -> int:
        """0 when live equals the plan, 1 when anything differs or could not be read."""
        return 1 if self.differs else 0


# ----------------------------------------------------------------------------- expected side


def expected_states(plan: Plan, site: Site | None = None) -> dict[str, Expected]:
    """Per-host proposed state.  With ``site``, clients' NIDs are known too (the plan keeps
    clients as folded classes without NIDs)."""
    out: dict[str, Expected] = {}
    client_nid: dict[str, str] = {}
    if site is not None:
        client_nid = dict(zip(site.clients.names, site.clients.nids, strict=True))
    for cc in plan.client_classes:
        nets = {cc.net: (cc.interface,)}
        routes = _route_map(cc.routes)
        shared = Expected(CLIENT, nets, routes, False)
        for name in nodes.expand(cc.members):
            nid = client_nid.get(name)
            out[name] = Expected(CLIENT, nets, routes, False, {cc.net: nid}) if nid else shared
    for r in plan.routers:
        nets_r: dict[str, set[str]] = {}
        for i in r.interfaces:
            nets_r.setdefault(i.net, set()).add(i.interface)
        out[r.name] = Expected(
            ROUTER,
            {n: tuple(sorted(v)) for n, v in nets_r.items()},
            {},
            True,
            {i.net: i.nid for i in r.interfaces},
        )
    by_routes: dict[int, Mapping[RouteKey, tuple[int, int]]] = {}
    for sr in plan.server_routes:
        by_routes[id(sr)] = _route_map(sr.routes)
    server_routes = {
        name: by_routes[id(sr)] for sr in plan.server_routes for name in nodes.expand(sr.servers)
    }
    for s in plan.servers:
        out[s.name] = Expected(
            SERVER, {s.net: (s.interface,)}, server_routes.get(s.name, {}), False, {s.net: s.nid}
        )
    return out


def _route_map(routes: Iterable[Route]) -> dict[RouteKey, tuple[int, int]]:
    return {(r.net, r.gateway): (r.hop, r.priority) for r in routes}


# ----------------------------------------------------------------------------- sorting


@lru_cache(maxsize=65536)
def _net_key(net: str) -> tuple[str, int]:
    try:
        n = nodes.parse_net(net)
    except nodes.NodeSyntaxError:
        return (net, -1)
    return (n.lnd, n.number)


@lru_cache(maxsize=262144)
def _nid_key(nid: str) -> tuple[object, ...]:
    addr, _, net = nid.rpartition("@")
    parts = tuple(int(x) if x.isdigit() else -1 for x in addr.split("."))
    return (_net_key(net), parts, nid)


def _rkey(entry: tuple[Any, ...]) -> tuple[object, ...]:
    return (_net_key(entry[0]), _nid_key(entry[1]))


def _natural(name: str) -> tuple[object, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


# ----------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class _RouteDiff:
    add: tuple[RouteEntry, ...]
    remove: tuple[RouteEntry, ...]
    change: tuple[RouteChange, ...]
    notes: tuple[str, ...]


class _Comparer:
    def __init__(self, plan: Plan) -> None:
        self.router_of = {i.nid: r.name for r in plan.routers for i in r.interfaces}
        self.memo: dict[tuple[int, int, int], _RouteDiff] = {}
        self.keep: list[object] = []  # keeps memo keys' objects alive
        self.diffs: dict[tuple[object, ...], HostDiff] = {}

    def _same_gateway(self, want: str, got: str, peers: Mapping[str, frozenset[str]]) -> bool:
        group = peers.get(got)
        if group is not None and want in group:
            return True
        r = self.router_of.get(want)
        return r is not None and r == self.router_of.get(got)

    def routes(
        self,
        want: Mapping[RouteKey, tuple[int, int]],
        table: RouteTable,
        peers: Mapping[str, frozenset[str]],
    ) -> _RouteDiff:
        key = (id(want), id(table), id(peers))
        got = self.memo.get(key)
        if got is not None:
            return got
        live = table.routes
        change: list[RouteChange] = []
        unmatched: list[RouteKey] = []
        for k, v in want.items():
            lv = live.get(k)
            if lv is None:
                unmatched.append(k)
            elif table.detailed and lv != v:
                change.append((k[0], k[1], lv[0], lv[1], v[0], v[1]))
        extra = [k for k in live if k not in want]
        notes: list[str] = []
        if unmatched and extra:
            by_net: dict[str, list[RouteKey]] = {}
            for k in extra:
                by_net.setdefault(k[0], []).append(k)
            still: list[RouteKey] = []
            taken: set[RouteKey] = set()
            for k in sorted(unmatched, key=_rkey):
                alias = next(
                    (
                        c
                        for c in by_net.get(k[0], ())
                        if c not in taken and self._same_gateway(k[1], c[1], peers)
                    ),
                    None,
                )
                if alias is None:
                    still.append(k)
                    continue
                taken.add(alias)
                notes.append(
                    f"route to {k[0]} via {k[1]} is listed under {alias[1]} "
                    "(another NID of the same router)"
                )
                lv, v = live[alias], want[k]
                if table.detailed and lv != v:
                    change.append((k[0], k[1], lv[0], lv[1], v[0], v[1]))
            unmatched = still
            extra = [k for k in extra if k not in taken]
        result = _RouteDiff(
            tuple(sorted(((k[0], k[1], *want[k]) for k in unmatched), key=_rkey)),
            tuple(sorted(((k[0], k[1], *live[k]) for k in extra), key=_rkey)),
            tuple(sorted(change, key=_rkey)),
            tuple(notes),
        )
        self.memo[key] = result
        self.keep.extend((want, table, peers))
        return result

    def host(self, exp: Expected, live: HostState) -> tuple[HostDiff, tuple[str, ...]]:
        notes: list[str] = list(live.all_health)
        unseen: list[str] = []
        add_nets: list[NetEntry] = []
        remove_nets: list[NetEntry] = []
        change_nets: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []
        nids: list[tuple[str, tuple[str, ...], str]] = []
        if live.nets is None:
            unseen.append("networks")
        else:
            lnets = live.nets.nets
            for net in sorted(exp.nets, key=_net_key):
                if net not in lnets:
                    add_nets.append((net, exp.nets[net]))
                    continue
                have, want = lnets[net], exp.nets[net]
                if have and want and set(have) != set(want):
                    change_nets.append((net, have, want))
                shown = live.nets.nids.get(net)
                nid = exp.nids.get(net)
                if shown and nid and nid not in shown:
                    nids.append((net, shown, nid))
            for net in sorted(lnets, key=_net_key):
                if net not in exp.nets:
                    remove_nets.append((net, lnets[net]))
        rd: _RouteDiff | None = None
        if live.routes is None:
            unseen.append("routes")
        else:
            rd = self.routes(exp.routes, live.routes, live.peers)
            notes.extend(rd.notes)
        routing = ""
        if live.routing is None:
            unseen.append("routing")
        elif live.routing != exp.routing:
            routing = "enable" if exp.routing else "disable"
        if unseen:
            notes.append(f"not in the dump, not compared: {', '.join(unseen)}")
        key = (
            exp.role,
            id(rd),
            tuple(add_nets),
            tuple(remove_nets),
            tuple(change_nets),
            tuple(nids),
            routing,
        )
        diff = self.diffs.get(key)
        if diff is None:
            diff = HostDiff(
                exp.role,
                tuple(add_nets),
                tuple(remove_nets),
                tuple(change_nets),
                tuple(nids),
                rd.add if rd else (),
                rd.remove if rd else (),
                rd.change if rd else (),
                routing,
            )
            self.diffs[key] = diff
        return diff, tuple(notes)


def _fold_hosts(names: Iterable[str]) -> str:
    """Fold live host names into one node set.  ``read_live`` only takes host names from file
    names that are host names; any other name (a ``LiveSet`` built elsewhere) is listed after
    the node set, escaped, and never parsed as node set syntax."""
    good: list[str] = []
    other: list[str] = []
    for name in names:
        (good if nodes.HOSTNAME_RE.match(name) else other).append(name)
    parts = [nodes.fold(good)] if good else []
    parts.extend(_show_name(name) for name in sorted(other))
    return ", ".join(parts)


def _show_name(name: str) -> str:
    """A host name as it is; anything else quoted and escaped."""
    return name if nodes.HOSTNAME_RE.match(name) else ascii(name)


def _show_path(path: str) -> str:
    return path if path.isprintable() else ascii(path)[1:-1]


def diff(plan: Plan, live: LiveSet, site: Site | None = None) -> DiffResult:
    """Compare ``plan`` (with ``site`` for client NIDs) with ``live``; see ``DiffResult``."""
    expected = expected_states(plan, site)
    cmp = _Comparer(plan)
    by_diff: dict[int, tuple[HostDiff, list[str]]] = {}
    equal: list[str] = []
    health: dict[str, list[str]] = {}
    for host, exp in expected.items():
        state = live.hosts.get(host)
        if state is None:
            continue
        d, notes = cmp.host(exp, state)
        for note in notes:
            health.setdefault(note, []).append(host)
        if d.empty:
            equal.append(host)
        else:
            by_diff.setdefault(id(d), (d, []))[1].append(host)
    merged: dict[HostDiff, list[str]] = {}
    for d, hosts in by_diff.values():  # equal diffs from different objects join here
        merged.setdefault(d, []).extend(hosts)
    groups = [Group(nodes.fold(h), len(h), d) for d, h in merged.items()]
    groups.sort(key=lambda g: (_ROLE_ORDER.get(g.diff.role, 9), _natural(g.hosts)))
    missing = [h for h in expected if h not in live.hosts and h not in live.error_hosts]
    unknown = sorted(
        (h for h in set(live.hosts) | live.error_hosts if h not in expected), key=_natural
    )
    health_rows = sorted(
        ((nodes.fold(h), len(h), note) for note, h in health.items()),
        key=lambda t: (t[2], _natural(t[0])),
    )
    return DiffResult(
        site=plan.site,
        strategy=plan.strategy,
        live_path=live.path,
        generated=live.generated,
        groups=groups,
        equal=nodes.fold(equal),
        equal_count=len(equal),
        missing=nodes.fold(missing),
        missing_count=len(missing),
        unknown=[(h, live.files.get(h, ())) for h in unknown],
        errors=sorted(live.errors),
        error_hosts=_fold_hosts(live.error_hosts),
        health=health_rows,
    )


# ----------------------------------------------------------------------------- change order


@dataclass(frozen=True)
class Step:
    """One ordered step: run ``commands`` on every host of ``hosts``."""

    number: int
    title: str
    hosts: str
    count: int
    commands: tuple[str, ...]


def route_add(net: str, gateway: str, hop: int, priority: int) -> str:
    hop_opt = f" --hop {hop}" if hop != UNDEFINED_HOP else ""
    return f"lnetctl route add --net {net} --gateway {gateway}{hop_opt} --priority {priority}"


def route_del(net: str, gateway: str) -> str:
    return f"lnetctl route del --net {net} --gateway {gateway}"


def _net_add(net: str, ifaces: Iterable[str]) -> str:
    ifs = ",".join(ifaces)
    return f"lnetctl net add --net {net}" + (f" --if {ifs}" if ifs else "")


def _adds_nets(d: HostDiff) -> list[str]:
    out = [_net_add(n, i) for n, i in d.add_nets]
    for net, have, want in d.change_nets:
        new = [i for i in want if i not in have]
        if new:
            out.append(_net_add(net, new))
    return out


def _removes_nets(d: HostDiff) -> list[str]:
    out: list[str] = []
    for net, have, want in d.change_nets:
        out.extend(f"lnetctl net del --net {net} --if {i}" for i in have if i not in want)
    out.extend(f"lnetctl net del --net {n}" for n, _i in d.remove_nets)
    return out


def _drains(d: HostDiff) -> bool:
    """Whether a host must stop forwarding (``set routing 0``) before its removals.  A router
    that does not forward yet (routing to be enabled) has nothing to drain."""
    if d.routing == "enable":
        return False
    if d.role == ROUTER:
        return bool(
            d.routing == "disable"
            or d.remove_nets
            or d.remove_routes
            or any(set(h) - set(w) for _n, h, w in d.change_nets)
        )
    return d.routing == "disable"


def _phases() -> list[tuple[str, Any]]:
    def nids(d: HostDiff) -> list[str]:
        return [
            f"# {net}: the interface gives NID {', '.join(have)}; the inventory says {nid} "
            "(set the interface address; LNet takes the NID from it)"
            for net, have, nid in d.nids
        ]

    return [
        ("fix interface addresses (outside LNet)", nids),
        ("add networks on routers", lambda d: _adds_nets(d) if d.role == ROUTER else []),
        (
            "enable routing on routers",
            lambda d: ["lnetctl set routing 1"] if d.routing == "enable" else [],
        ),
        (
            "add networks on servers and clients",
            lambda d: _adds_nets(d) if d.role != ROUTER else [],
        ),
        (
            "add routes on servers (return paths before clients use them)",
            lambda d: [route_add(*r) for r in d.add_routes] if d.role == SERVER else [],
        ),
        (
            "add routes on clients",
            lambda d: [route_add(*r) for r in d.add_routes] if d.role == CLIENT else [],
        ),
        (
            "add routes on routers",
            lambda d: [route_add(*r) for r in d.add_routes] if d.role == ROUTER else [],
        ),
        (
            "replace changed routes (LNet cannot change hop or priority in place)",
            lambda d: [
                c
                for r in d.change_routes
                for c in (route_del(r[0], r[1]), route_add(r[0], r[1], r[4], r[5]))
            ],
        ),
        (
            "drain routers before their routes and networks go",
            lambda d: ["lnetctl set routing 0"] if _drains(d) else [],
        ),
        (
            "remove old routes on clients",
            lambda d: [route_del(r[0], r[1]) for r in d.remove_routes] if d.role == CLIENT else [],
        ),
        (
            "remove old routes on servers",
            lambda d: [route_del(r[0], r[1]) for r in d.remove_routes] if d.role == SERVER else [],
        ),
        (
            "remove old routes and networks on drained routers",
            lambda d: (
                ([route_del(r[0], r[1]) for r in d.remove_routes] + _removes_nets(d))
                if d.role == ROUTER
                else []
            ),
        ),
        (
            "re-enable routing on drained routers that stay routers",
            lambda d: (
                ["lnetctl set routing 1"]
                if d.role == ROUTER and _drains(d) and d.routing != "disable"
                else []
            ),
        ),
        (
            "remove old networks on servers and clients",
            lambda d: _removes_nets(d) if d.role != ROUTER else [],
        ),
    ]


def plan_changes(result: DiffResult) -> list[Step]:
    """The changes of ``result`` as ordered lnetctl steps per node set (empty when equal).

    Within a step, groups that run the same commands are merged into one node set.
    """
    steps: list[Step] = []
    for title, make in _phases():
        by_cmds: dict[tuple[str, ...], list[Group]] = {}
        for g in result.groups:
            cmds = tuple(make(g.diff))
            if cmds:
                by_cmds.setdefault(cmds, []).append(g)
        if not by_cmds:
            continue
        number = len({s.number for s in steps}) + 1
        items = []
        for cmds, gs in by_cmds.items():
            hosts = (
                gs[0].hosts
                if len(gs) == 1
                else nodes.fold(n for g in gs for n in nodes.expand(g.hosts))
            )
            role = min(_ROLE_ORDER.get(g.diff.role, 9) for g in gs)
            items.append(
                (role, _natural(hosts), Step(number, title, hosts, sum(g.count for g in gs), cmds))
            )
        steps.extend(s for _r, _n, s in sorted(items, key=lambda t: (t[0], t[1])))
    return steps


# ----------------------------------------------------------------------------- rendering


def _route_text(r: tuple[Any, ...]) -> str:
    return f"route {r[0]} via {r[1]} hop {r[2]} priority {r[3]}"


def diff_lines(d: HostDiff) -> list[str]:
    """One line per change: ``+`` add, ``-`` remove, ``~`` change, ``!`` not fixable by LNet."""
    out: list[str] = []
    out += [f"+ net {n} ({','.join(i) or '-'})" for n, i in d.add_nets]
    out += [f"- net {n} ({','.join(i) or '-'})" for n, i in d.remove_nets]
    out += [f"~ net {n} interfaces {','.join(h)} -> {','.join(w)}" for n, h, w in d.change_nets]
    out += [f"! nid on {n}: live {', '.join(h)}, inventory {w}" for n, h, w in d.nids]
    if d.routing:
        out.append(
            "~ routing: disabled -> enabled"
            if d.routing == "enable"
            else "~ routing: enabled -> disabled"
        )
    out += [f"+ {_route_text(r)}" for r in d.add_routes]
    out += [f"- {_route_text(r)}" for r in d.remove_routes]
    for r in d.change_routes:
        parts = []
        if r[2] != r[4]:
            parts.append(f"hop {r[2]} -> {r[4]}")
        if r[3] != r[5]:
            parts.append(f"priority {r[3]} -> {r[5]}")
        out.append(f"~ route {r[0]} via {r[1]}: {', '.join(parts)}")
    return out


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def format_text(result: DiffResult) -> str:
    """The human-readable report (ends with a newline)."""
    out: list[str] = []
    src = result.live_path
    if result.generated:
        gen = result.generated
        src += (
            f" (lnetgen output for site {gen.get('site', '?')}, strategy "
            f"{gen.get('strategy', '?')})"
        )
    out.append(f"site {result.site}, strategy {result.strategy} vs live {src}")
    differ = sum(g.count for g in result.groups)
    out.append(
        f"{_count(result.compared, 'host')} compared: {result.equal_count} equal, "
        f"{differ} differ; {result.missing_count} missing, {len(result.unknown)} "
        f"unknown, {len(result.errors)} unreadable "
        f"{'dump' if len(result.errors) == 1 else 'dumps'}"
    )
    for g in result.groups:
        out.append("")
        out.append(f"{g.hosts} ({g.diff.role}, {_count(g.count, 'host')})")
        out.extend(f"  {line}" for line in diff_lines(g.diff))
    if result.missing_count:
        out.append("")
        out.append(
            f"missing (in the plan, no live dump): {result.missing} "
            f"({_count(result.missing_count, 'host')})"
        )
    if result.unknown:
        out.append("")
        out.append(
            f"unknown (live dump, not in the plan): {_fold_hosts(h for h, _f in result.unknown)}"
        )
        for host, files in result.unknown[:20]:
            out.append(f"  {_show_name(host)}: {', '.join(_show_path(f) for f in files)}")
        if len(result.unknown) > 20:
            out.append(f"  ... and {len(result.unknown) - 20} more")
    if result.errors:
        out.append("")
        # a file whose name is not a host name belongs to no host
        hosts = f" ({result.error_hosts})" if result.error_hosts else ""
        out.append(f"unreadable dumps{hosts}:")
        out.extend(f"  {d.format()}" for d in result.errors)
    if result.health:
        out.append("")
        out.append("health (not configuration; does not change the exit status):")
        out.extend(f"  {hosts}: {note}" for hosts, _n, note in result.health)
    if not result.differs:
        out.append("")
        out.append("live state equals the plan")
    return "\n".join(out) + "\n"


def format_steps(steps: list[Step], result: DiffResult) -> str:
    """``--plan-changes`` text: numbered steps, a node set and its commands (ends with \\n)."""
    out: list[str] = []
    if not steps:
        out.append("# nothing to change")
    last = 0
    for s in steps:
        if s.number != last:
            if out:
                out.append("")
            out.append(f"# step {s.number}: {s.title}")
            last = s.number
        out.append(f"[{s.hosts}]  ({_count(s.count, 'host')})")
        out.extend(f"  {c}" for c in s.commands)
    skipped = []
    if result.missing_count:
        skipped.append(f"missing {result.missing}")
    if result.error_hosts:
        skipped.append(f"unreadable {result.error_hosts}")
    if skipped:
        out.append("")
        out.append(f"# not planned (no usable live state): {'; '.join(skipped)}")
    return "\n".join(out) + "\n"


def _route_dict(r: tuple[Any, ...]) -> dict[str, Any]:
    return {"net": r[0], "gateway": r[1], "hop": r[2], "priority": r[3]}


def to_dict(result: DiffResult, steps: list[Step] | None = None) -> dict[str, Any]:
    """The JSON form (``--format json``)."""
    doc: dict[str, Any] = {
        "site": result.site,
        "strategy": result.strategy,
        "live": result.live_path,
        "generated": result.generated,
        "differs": result.differs,
        "summary": {
            "compared": result.compared,
            "equal": result.equal_count,
            "differ": sum(g.count for g in result.groups),
            "missing": result.missing_count,
            "unknown": len(result.unknown),
            "unreadable": len(result.errors),
        },
        "equal": result.equal,
        "groups": [
            {
                "hosts": g.hosts,
                "count": g.count,
                "role": g.diff.role,
                "add_nets": [{"net": n, "interfaces": list(i)} for n, i in g.diff.add_nets],
                "remove_nets": [{"net": n, "interfaces": list(i)} for n, i in g.diff.remove_nets],
                "change_nets": [
                    {"net": n, "live": list(h), "proposed": list(w)}
                    for n, h, w in g.diff.change_nets
                ],
                "nids": [{"net": n, "live": list(h), "inventory": w} for n, h, w in g.diff.nids],
                "routing": g.diff.routing or None,
                "add_routes": [_route_dict(r) for r in g.diff.add_routes],
                "remove_routes": [_route_dict(r) for r in g.diff.remove_routes],
                "change_routes": [
                    {
                        "net": r[0],
                        "gateway": r[1],
                        "live": {"hop": r[2], "priority": r[3]},
                        "proposed": {"hop": r[4], "priority": r[5]},
                    }
                    for r in g.diff.change_routes
                ],
            }
            for g in result.groups
        ],
        "missing": result.missing,
        "unknown": [{"host": h, "files": list(f)} for h, f in result.unknown],
        "errors": [d.as_dict() for d in result.errors],
        "health": [{"hosts": h, "count": n, "note": note} for h, n, note in result.health],
    }
    if steps is not None:
        doc["steps"] = [
            {
                "step": s.number,
                "title": s.title,
                "hosts": s.hosts,
                "count": s.count,
                "commands": list(s.commands),
            }
            for s in steps
        ]
    return doc
