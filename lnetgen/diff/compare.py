"""The comparison of a plan with live state per host, folding hosts with the same changes.

Both sides are normalized first (``lnetgen.live`` does the live side), then compared per host
(NAPALM ``compare_config`` style: an empty result means no change):

* routes keyed by (net, gateway NID): added, removed, or changed in hop/priority; a change
  needs ``lnetctl route del`` + ``route add`` since LNet cannot update a route in place.  A
  live gateway listed under another NID of the same router (discovery consolidates routes
  under a peer's primary NID) matches;
* networks added or removed, interfaces changed; NIDs that differ from the inventory's;
* routing enabled on routers and disabled elsewhere.

Hosts of the plan with no live dump are *missing* (with the reason ``lnetgen collect``
recorded for them, when PATH is a collect directory: ``missing_reasons``), dumped hosts the
plan does not know are *unknown*; unreadable dumps are errors.  Hosts (and route tables) that
share their expected state share the comparison's result objects, which keeps a site of
thousands of clients fast.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from lnetgen import nodes
from lnetgen.diagnostics import UsageError, usage
from lnetgen.diff.expected import Expected, expected_states
from lnetgen.diff.paths import build_paths
from lnetgen.diff.result import (
    DiffResult,
    Group,
    HostDiff,
    NetEntry,
    RouteChange,
    RouteEntry,
    fold_hosts,
    missing_reasons,
    natural,
    role_rank,
)
from lnetgen.live import HostState, LiveSet, NetTable, RouteKey, RouteTable
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.tunables import KERNEL_DEFAULTS
from lnetgen.udsp import Rule


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


def _change(k: RouteKey, have: tuple[int, int], want: tuple[int, int]) -> RouteChange:
    return (k[0], k[1], have[0], have[1], want[0], want[1])


@dataclass(frozen=True)
class _RouteDiff:
    add: tuple[RouteEntry, ...]
    remove: tuple[RouteEntry, ...]
    change: tuple[RouteChange, ...]
    notes: tuple[str, ...]


#: add_nets, remove_nets, change_nets and nids of a ``HostDiff``, in its field order
_NetDiff = tuple[
    tuple[NetEntry, ...],
    tuple[NetEntry, ...],
    tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...],
    tuple[tuple[str, tuple[str, ...], str], ...],
]


def _nets(exp: Expected, live: NetTable) -> _NetDiff:
    """Networks to add and remove, interface changes, and NIDs the inventory disagrees with."""
    add_nets: list[NetEntry] = []
    remove_nets: list[NetEntry] = []
    change_nets: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []
    nids: list[tuple[str, tuple[str, ...], str]] = []
    lnets = live.nets
    for net in sorted(exp.nets, key=_net_key):
        if net not in lnets:
            add_nets.append((net, exp.nets[net]))
            continue
        have, want = lnets[net], exp.nets[net]
        if have and want and set(have) != set(want):
            change_nets.append((net, have, want))
        shown = live.nids.get(net)
        for nid in (exp.nids.get(net), *exp.rail_nids.get(net, ())):
            if shown and nid and nid not in shown:
                nids.append((net, shown, nid))
    for net in sorted(lnets, key=_net_key):
        if net not in exp.nets:
            remove_nets.append((net, lnets[net]))
    return tuple(add_nets), tuple(remove_nets), tuple(change_nets), tuple(nids)


class _Comparer:
    """Compares hosts one by one, memoizing route comparisons and host diffs so that hosts
    with the same changes get the same ``HostDiff`` object."""

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
                change.append(_change(k, lv, v))
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
                    change.append(_change(k, lv, v))
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
        nets: _NetDiff = ((), (), (), ())
        if live.nets is None:
            unseen.append("networks")
        else:
            nets = _nets(exp, live.nets)
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
        tunables = _tunables(exp, live)
        if live.tunables is None and exp.tunables:
            unseen.append("tunables")
        add_udsp: tuple[Rule, ...] = ()
        remove_udsp: tuple[tuple[int, Rule], ...] = ()
        if live.udsp is None:
            if exp.udsp:
                unseen.append("udsp")
        else:
            want = {r.key() for r in exp.udsp}
            have = {r.key() for r in live.udsp}
            add_udsp = tuple(r for r in exp.udsp if r.key() not in have)
            remove_udsp = tuple((i, r) for i, r in enumerate(live.udsp) if r.key() not in want)
            notes.extend(_dead_rules(live.udsp, want))
        if unseen:
            notes.append(f"not in the dump, not compared: {', '.join(unseen)}")
        key = (exp.role, id(rd), nets, routing, tunables, add_udsp, remove_udsp)
        diff = self.diffs.get(key)
        if diff is None:
            diff = HostDiff(
                exp.role,
                *nets,
                rd.add if rd else (),
                rd.remove if rd else (),
                rd.change if rd else (),
                routing,
                tunables,
                add_udsp,
                remove_udsp,
            )
            self.diffs[key] = diff
        return diff, tuple(notes)


def _dead_rules(rules: tuple[Rule, ...], want: set[tuple[str, str, str, int | None]]) -> list[str]:
    """A note per rule the kernel keeps but never applies (``Rule.dead``: a router rule with a
    priority action, as the lnet.conf of older lnetgen versions carried), which the plan
    removes, and adds again without --priority when it wants the rule (``want``: keys)."""
    out = []
    for i, r in enumerate(rules):
        if r.dead:
            again = (r.src, r.dst, r.rte, None) in want
            out.append(
                f"UDSP rule idx {i} ({r.options()}) is never applied: the kernel applies a rule "
                "with --dst and --rte only without a priority action; removed"
                + (", and added again without --priority" if again else "")
            )
    return out


def _tunables(exp: Expected, live: HostState) -> tuple[tuple[str, int | None, int | None], ...]:
    """The settings live dumps show differently from the plan, for the names those dumps can
    show at all: proposed ones they lack or set otherwise, and -- in configuration files --
    ones they set that the plan does not."""
    if live.tunables is None:
        return ()
    out: list[tuple[str, int | None, int | None]] = []
    names = set(exp.tunables)
    if live.tunables_explicit:  # set there, not in the plan, and not the kernel's default
        names |= {n for n, v in live.tunables.items() if KERNEL_DEFAULTS.get(n) != v}
    for name in sorted(names):
        if name.rpartition(".")[2] not in live.tunables_shown:
            continue
        have, want = live.tunables.get(name), exp.tunables.get(name)
        if have != want:
            out.append((name, have, want))
    return tuple(out)


def diff(
    plan: Plan, live: LiveSet, site: Site | None = None, hosts: Collection[str] | None = None
) -> DiffResult:
    """Compare ``plan`` (with ``site`` for client NIDs) with ``live``; see ``DiffResult``.
    ``hosts`` limits the comparison: hosts outside it are neither missing nor unknown."""
    expected = expected_states(plan, site)
    # the whole site's gateways, whatever --hosts says; hosts outside it stay as they are
    paths = build_paths(expected, live, hosts)
    if hosts is not None:
        expected = {h: e for h, e in expected.items() if h in hosts}
        live = _within(live, hosts)
        if not expected and not live.hosts and not live.error_hosts:
            # "0 hosts compared ... live state equals the plan" was exit 0 for a typo
            raise UsageError(
                [usage("--hosts", "names no host of the plan and no host of the live state")]
            )
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
    groups.sort(key=lambda g: (role_rank(g.diff.role), natural(g.hosts)))
    missing = [h for h in expected if h not in live.hosts and h not in live.error_hosts]
    unknown = sorted(
        (h for h in set(live.hosts) | live.error_hosts if h not in expected), key=natural
    )
    health_rows = sorted(
        ((nodes.fold(h), len(h), note) for note, h in health.items()),
        key=lambda t: (t[2], natural(t[0])),
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
        error_hosts=fold_hosts(live.error_hosts),
        health=health_rows,
        paths=paths,
        missing_reasons=missing_reasons(missing, live.collect_failed),
    )


def _within(live: LiveSet, hosts: Collection[str]) -> LiveSet:
    """``live`` without the hosts outside ``hosts`` (and without their unreadable dumps and
    the reasons collect recorded for them)."""
    outside = (set(live.hosts) | live.error_hosts | set(live.collect_failed)) - set(hosts)
    if not outside:
        return live
    their_files = {f for h in outside for f in live.files.get(h, ())}
    return replace(
        live,
        hosts={h: s for h, s in live.hosts.items() if h in hosts},
        files={h: f for h, f in live.files.items() if h in hosts},
        errors=[d for d in live.errors if d.file not in their_files],
        error_hosts=live.error_hosts - outside,
        collect_failed={h: w for h, w in live.collect_failed.items() if h not in outside},
    )
