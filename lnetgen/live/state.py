"""The normalized live state every reader produces: route and net tables, one host's state,
the set of hosts read from a live PATH, and the names of the formats a state came from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lnetgen.diagnostics import Diagnostic
from lnetgen.udsp import Rule

RouteKey = tuple[str, str]  # (net, gateway NID)

UNDEFINED_HOP = -1

# format names, as reported in HostState.formats
EXPORT = "lnetctl export"
BACKUP = "lnetctl export --backup"
CONFIG = "lnetctl YAML"
ROUTE_SHOW = "lnetctl route show"
ROUTE_SHOW_V = "lnetctl route show -v"
NET_SHOW = "lnetctl net show"
ROUTING_SHOW = "lnetctl routing show"
UDSP_SHOW = "lnetctl udsp show"
LCTL_ROUTES = "lctl get_param routes"
LCTL_SHOW_ROUTE = "lctl show_route"
MODPROBE = "modprobe"


@dataclass(frozen=True, eq=False)
class RouteTable:
    """Routes of one dump: (net, gateway) -> (hop, priority).

    ``detailed`` is False when the dump lists routes without hop and priority (``lnetctl route
    show`` without ``-v``): then only presence can be compared.  Compared by identity, so that
    hosts sharing a parsed table share comparison work.
    """

    routes: Mapping[RouteKey, tuple[int, int]]
    detailed: bool = True
    health: tuple[str, ...] = ()
    shows_state: bool = False  # entries carry state/type (a full export, not --backup)


@dataclass(frozen=True, eq=False)
class NetTable:
    """Networks of one dump: net -> interfaces (sorted; ``()`` when the dump shows none), and
    net -> the NIDs shown (empty when the dump has none, e.g. an lnet.conf)."""

    nets: Mapping[str, tuple[str, ...]]
    nids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    health: tuple[str, ...] = ()
    #: NI tunables shown, as ``<lnd>.<name>`` (lnetgen.tunables)
    tunables: Mapping[str, int] = field(default_factory=dict)


#: The peers of a dump without a ``peer:`` section (one shared empty mapping).
NO_PEERS: Mapping[str, frozenset[str]] = {}


@dataclass(frozen=True)
class HostState:
    """Normalized live state of one host; ``None`` means the dump did not show that part.

    ``routing`` is True when the node forwards, False when it does not (including
    ``stopping``, a drain in progress).  A setting in ``tunables_shown`` but missing from
    ``tunables`` is not set.  ``peers`` maps a NID to every NID of its peer (from an
    export's ``peer:`` section), for gateways that discovery lists under their primary NID.
    """

    nets: NetTable | None = None
    routes: RouteTable | None = None
    routing: bool | None = None
    peers: Mapping[str, frozenset[str]] = field(default_factory=lambda: NO_PEERS)
    health: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()
    #: LNet tunables the dumps set or show (lnetgen.tunables' names); ``None``: not shown.
    #: ``tunables_shown``: the names those dumps can show at all.
    tunables: Mapping[str, int] | None = None
    tunables_shown: frozenset[str] = frozenset()
    #: the dumps are configuration files (an lnet.conf, modprobe): what they set and the plan
    #: does not is a difference, unless it is the kernel's default (an export prints them all)
    tunables_explicit: bool = False
    #: UDSP rules in order (``udsp:`` of an export or lnet.conf; ``()`` none, ``None``: the
    #: dumps do not show them)
    udsp: tuple[Rule, ...] | None = None
    #: the file ``udsp`` was read from when it is not the state's own (a generated tree's
    #: UDSP script, ``udsp/<class>.sh``); the rules' lines are in it
    udsp_file: str = ""

    @property
    def all_health(self) -> tuple[str, ...]:
        """Health notes of the state and of its tables, without repeats, in order."""
        seen: dict[str, None] = {}
        for part in (
            self.nets.health if self.nets else (),
            self.routes.health if self.routes else (),
            self.health,
        ):
            for note in part:
                seen.setdefault(note, None)
        return tuple(seen)


@dataclass
class LiveSet:
    """Every host read from a live PATH.

    ``hosts`` holds the hosts with at least one readable dump; ``errors`` one diagnostic per
    unreadable dump and ``error_hosts`` the hosts they belong to.  ``generated`` holds the
    manifest's site, strategy and digest when PATH is an ``lnetgen generate`` directory;
    ``collect_failed`` the reasons an ``lnetgen collect`` directory records for its failed hosts
    (a host among them may still have a dump, added by hand).
    """

    path: str
    hosts: dict[str, HostState] = field(default_factory=dict)
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    errors: list[Diagnostic] = field(default_factory=list)
    error_hosts: set[str] = field(default_factory=set)
    generated: dict[str, str] | None = None
    #: host -> why ``lnetgen collect`` could not read it (PATH is a collect directory)
    collect_failed: dict[str, str] = field(default_factory=dict)
