"""What a diff finds: the roles, per-host changes (``HostDiff``), groups of hosts that need the
same changes, and the whole ``DiffResult``; also how host names in it are sorted and shown."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic
from lnetgen.udsp import Rule

ROUTER, SERVER, CLIENT = "router", "server", "client"
_ROLE_ORDER = {ROUTER: 0, SERVER: 1, CLIENT: 2}

#: (net, gateway, hop, priority)
RouteEntry = tuple[str, str, int, int]
#: (net, gateway, live hop, live priority, proposed hop, proposed priority)
RouteChange = tuple[str, str, int, int, int, int]
#: (net, interfaces)
NetEntry = tuple[str, tuple[str, ...]]


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
    #: (name, live value, proposed value; None: not set), lnetgen.tunables' names
    tunables: tuple[tuple[str, int | None, int | None], ...] = ()
    #: UDSP rules to add, and live rules to remove with their position (``idx``)
    add_udsp: tuple[Rule, ...] = ()
    remove_udsp: tuple[tuple[int, Rule], ...] = ()

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
            or self.tunables
            or self.add_udsp
            or self.remove_udsp
        )


@dataclass(frozen=True)
class Group:
    """Hosts (a folded node set) that need exactly the same changes."""

    hosts: str
    count: int
    diff: HostDiff


#: (destination net, router name, gateway NID); the router is ``?NID`` for a gateway that is
#: no router of the plan and shows no NID of one.
Hop = tuple[str, str, str]


@dataclass(frozen=True)
class Peer:
    """Hosts (clients or servers) with the same gateways, live and planned."""

    role: str
    count: int
    live: frozenset[Hop]
    want: frozenset[Hop]
    #: the hops of ``want`` at the best priority of their net: the gateways LNet uses while
    #: they live (None: not known, every hop of ``want`` counts)
    best: frozenset[Hop] | None = None


@dataclass(frozen=True)
class Paths:
    """Every non-router host's gateways, and every router's planned nets."""

    peers: tuple[Peer, ...]
    router_nets: Mapping[str, frozenset[str]]
    #: hosts outside ``--hosts`` whose live routes or networks differ from the plan: no step
    #: of this run changes them, so removing routes or networks in scope may cut them off
    outside: int = 0


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
    #: why ``lnetgen collect`` could not read missing hosts (``missing_reasons``): hosts,
    #: count, reason
    missing_reasons: list[tuple[str, int, str]] = field(default_factory=list)
    #: every host's gateways, live and planned (what ``plan_changes`` drains by); None in a
    #: result built by hand: then no router is drained
    paths: Paths | None = field(default=None, repr=False, compare=False)

    @property
    def differ_count(self) -> int:
        """Hosts with changes (the hosts of all groups)."""
        return sum(g.count for g in self.groups)

    @property
    def compared(self) -> int:
        return self.equal_count + self.differ_count

    @property
    def differs(self) -> bool:
        return bool(self.groups or self.missing_count or self.unknown or self.errors)

    @property
    def exit_code(self) -> int:
        """0 when live equals the plan, 1 when anything differs or could not be read."""
        return 1 if self.differs else 0


def role_rank(role: str) -> int:
    """Routers first, then servers, then clients: the order groups and steps are listed in."""
    return _ROLE_ORDER.get(role, 9)


def natural(name: str) -> tuple[object, ...]:
    """Sort key in which digit runs compare as numbers (``rtr2`` before ``rtr10``)."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def fold_hosts(names: Iterable[str]) -> str:
    """Fold live host names into one node set.  ``read_live`` only takes host names from file
    names that are host names; any other name (a ``LiveSet`` built elsewhere) is listed after
    the node set, escaped, and never parsed as node set syntax."""
    good: list[str] = []
    other: list[str] = []
    for name in names:
        (good if nodes.HOSTNAME_RE.match(name) else other).append(name)
    parts = [nodes.fold(good)] if good else []
    parts.extend(show_name(name) for name in sorted(other))
    return ", ".join(parts)


def show_name(name: str) -> str:
    """A host name as it is; anything else quoted and escaped."""
    return name if nodes.HOSTNAME_RE.match(name) else ascii(name)


#: What a host's own name becomes in a reason shared by several hosts.
HOST_MARK = "<host>"


def missing_reasons(
    missing: Sequence[str], failed: Mapping[str, str]
) -> list[tuple[str, int, str]]:
    """The reasons ``lnetgen collect`` recorded (``failed``: host -> reason) for the hosts of
    ``missing``, as (folded hosts, count, reason) rows in the order of their hosts.

    Decision: an administrator reads why a host has no dump beside the list of missing hosts,
    once per cause, not once per host.  Most failures name the host itself (``ssh: connect
    to host nid00096 port 22: No route to host``), so hosts whose reasons differ only by their
    own name (as a whole word) share one row, which says ``<host>`` there; a host alone with
    its reason keeps it as collect recorded it.  Missing hosts collect recorded nothing for
    (PATH is no collect directory, or collect was not asked about them) have no row.  The
    reasons are collect's, already escaped and cut to a bounded length by the live reader.
    """
    rows: dict[str, list[str]] = {}
    first: dict[str, str] = {}
    for host in missing:
        why = failed.get(host)
        if why is None:
            continue
        key = _unnamed(why, host)
        rows.setdefault(key, []).append(host)
        first.setdefault(key, why)
    ordered = sorted(
        (min(natural(h) for h in hosts), nodes.fold(hosts), len(hosts), first[key], key)
        for key, hosts in rows.items()
    )
    return [(folded, n, why if n == 1 else key) for _k, folded, n, why, key in ordered]


_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def _unnamed(text: str, host: str) -> str:
    """``text`` with ``host`` as a whole word (``nid1`` in ``nid1.example``, not in ``nid10``)
    written ``HOST_MARK``."""
    out: list[str] = []
    start = i = 0
    while host and (i := text.find(host, i)) >= 0:
        end = i + len(host)
        if (i == 0 or text[i - 1] not in _WORD) and (end == len(text) or text[end] not in _WORD):
            out += (text[start:i], HOST_MARK)
            start = end
        i = end
    return "".join(out) + text[start:] if out else text
