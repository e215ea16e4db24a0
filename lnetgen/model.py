"""The validated site: frozen dataclasses, built by ``inventory`` and read by every later stage.

Nothing here parses YAML or reports problems; a ``Site`` exists only when the inventory has no
errors.  Client nodes are kept as arrays (names, NIDs, coordinates) because sites have tens of
thousands of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from lnetgen.nodes import Net
from lnetgen.rates import NO_RATES, Rate, Rates
from lnetgen.target import NO_TARGETS, Targets

#: Ports an InfiniBand switch chip may have (PortInfo numbers ports with 8 bits, 255 is
#: reserved): a leaf module's external ports and uplinks, a spine's downlinks, a TOR's ports.
MAX_SWITCH_PORTS = 254


@dataclass(frozen=True, order=True)
class Attachment:
    """A host port cabled to ``switch``/``leaf`` at ``port``.  ``leaf`` is '' on a TOR switch."""

    switch: str
    leaf: str
    port: int

    @property
    def module(self) -> tuple[str, str]:
        """The unit traffic stays on without crossing a spine: (switch, leaf)."""
        return (self.switch, self.leaf)

    def label(self) -> str:
        return f"{self.switch}/{self.leaf}" if self.leaf else self.switch


@dataclass(frozen=True)
class Leaf:
    name: str
    ports: int
    uplinks: int
    guid: str = ""


@dataclass(frozen=True)
class Switch:
    name: str
    kind: str  # director | tor
    fabric: str
    leaves: tuple[Leaf, ...]
    spines: int
    guid: str = ""
    spine_guids: tuple[str, ...] = ()
    #: its own ``ib_link``/``uplink`` rates, over the site's (``fabrics[].switches[].rates``)
    rates: Rates = NO_RATES

    def leaf(self, name: str) -> Leaf | None:
        for leaf in self.leaves:
            if leaf.name == name:
                return leaf
        return None


@dataclass(frozen=True)
class OpenSMChoice:
    """OpenSM settings a site recorded for a fabric (``fabrics[].opensm``) after
    ``lnetgen fabric check`` measured them; ``generate`` writes exactly these, with
    ``measured`` (what the measurement showed, one line; "" when the site recorded none) as a
    comment.  ``measured`` is no setting: two choices of the same settings are equal."""

    io_guid_file: bool = False
    cn_guid_file: bool = False
    root_guid_file: bool = False
    max_reverse_hops: int = 0
    measured: str = field(default="", compare=False)

    def label(self) -> str:
        parts = [k for k in ("io_guid_file", "cn_guid_file", "root_guid_file") if getattr(self, k)]
        if self.max_reverse_hops:
            parts.append(f"max_reverse_hops {self.max_reverse_hops}")
        return ", ".join(parts) or "ftree only"


@dataclass(frozen=True)
class Fabric:
    """A fabric; ``server_net`` is the number of the shared server net of a storage fabric
    (``<storage_lnd><server_net>``, see docs/inventory.md), None on a compute fabric."""

    name: str
    role: str  # storage | compute
    switches: tuple[Switch, ...]
    server_net: int | None = None
    opensm: OpenSMChoice | None = None  # recorded settings; None: write none


@dataclass(frozen=True)
class Rail:
    """A further storage-fabric port of a router or server on the same LNet net as its first
    (LNet Multi-Rail): its own address, interface and cable, on the same leaf module."""

    ip: str
    interface: str
    guid: str
    attach: Attachment


@dataclass(frozen=True)
class Router:
    name: str
    client_nid: str  # canonical, e.g. "10@gni"
    client_net: Net
    client_interface: str
    storage_ip: str
    storage_interface: str
    guid: str
    attach: Attachment
    coords: tuple[int, int, int] | None = None
    client_guid: str = ""
    client_attach: Attachment | None = None
    #: (group, switch) of the router's compute-side port on a dragonfly client side
    dragonfly: tuple[int, int] | None = None
    #: further storage-side ports (Multi-Rail), each an NI on every storage net of the router
    rails: tuple[Rail, ...] = ()

    @property
    def storage_ports(self) -> tuple[Rail, ...]:
        """Every storage-side port: the first (``storage``, ``attach``), then the rails."""
        return (Rail(self.storage_ip, self.storage_interface, self.guid, self.attach), *self.rails)


@dataclass(frozen=True)
class Server:
    name: str
    role: str  # oss | mds
    fs: str
    ip: str
    interface: str
    guid: str
    attach: Attachment
    osts: tuple[int, ...] = ()
    mdts: tuple[int, ...] = ()
    failover: str = ""  # the failover partner's name, or ''
    fabric: str = ""  # the storage fabric the server is cabled to
    #: further storage-fabric ports (Multi-Rail), each an NI on every net of the server
    rails: tuple[Rail, ...] = ()

    @property
    def ports(self) -> tuple[Rail, ...]:
        """Every port on the storage fabric: the first (``ip``, ``attach``), then the rails."""
        return (Rail(self.ip, self.interface, self.guid, self.attach), *self.rails)


@dataclass(frozen=True)
class FileSystem:
    """A Lustre file system; ``mgs`` is the server running its MGS (default: its first MDS)."""

    name: str
    net_base: int | None = None
    mgs: str = ""


@dataclass(frozen=True)
class ClientNet:
    net: Net
    interface: str


@dataclass(frozen=True, eq=False)
class Clients:
    """All compute clients, in inventory order (groups concatenated).

    ``names[i]`` is a host, ``nids[i]`` its NID on ``nets[net_index[i]]``; ``coords[i]`` its
    torus position (row of -1 when the client side is not a torus); ``leaf[i]`` an index into
    ``leaves`` for fat-tree client sides (-1 otherwise).
    """

    names: tuple[str, ...]
    nids: tuple[str, ...]
    net_index: npt.NDArray[np.int32]
    nets: tuple[Net, ...]
    interfaces: tuple[str, ...]  # per net
    groups: tuple[tuple[str, int, int], ...]  # (group name, start, stop)
    coords: npt.NDArray[np.int32]
    leaf: npt.NDArray[np.int32]
    leaves: tuple[tuple[str, str], ...] = ()
    guids: tuple[str, ...] = ()  # port GUIDs on an IB compute fabric, or empty
    ports: npt.NDArray[np.int32] | None = None  # leaf port of each fat-tree client (else 0)
    iface_index: npt.NDArray[np.int32] | None = None  # per client, into iface_names
    iface_names: tuple[str, ...] = ()
    #: per client on a dragonfly client side, its switch as ``group * switches + switch``
    switch: npt.NDArray[np.int32] | None = None

    def interface_of(self, i: int) -> str:
        """The LNet interface of client ``i``."""
        if self.iface_index is None:
            return self.interfaces[int(self.net_index[i])]
        return self.iface_names[int(self.iface_index[i])]

    def __len__(self) -> int:
        return len(self.names)


@dataclass(frozen=True)
class Torus:
    dims: tuple[int, int, int]
    nodes_per_chip: int
    routing: str  # xyz | seastar
    #: chips where a router could go (``topology.router_slots``), for ``advise routers``
    slots: tuple[tuple[int, int, int], ...] = ()


@dataclass(frozen=True)
class Dragonfly:
    """A dragonfly client side (HPE Slingshot, Cray Aries): ``groups`` groups of ``switches``
    switches, the switches of a group linked all-to-all (``local_links`` links per pair), each
    pair of groups by ``global_links`` links.  ``edge_ports``: host ports per switch (0: not
    stated).  Switches are numbered ``group * switches + switch`` (see lnetgen.topology)."""

    groups: int
    switches: int
    global_links: int
    local_links: int = 1
    edge_ports: int = 0

    def label(self, switch: int) -> str:
        """``g3s07``: group 3, switch 7."""
        return f"g{switch // self.switches}s{switch % self.switches:02d}"


@dataclass(frozen=True)
class GroupParams:
    oss: tuple[int, int] = (4, 3)
    mds: tuple[int, int] = (2, 1)
    backup: str = "balanced"
    backup_priority: int = 1


@dataclass(frozen=True)
class StrategyParams:
    default: str = "projection"
    storage_lnd: str = "o2ib"
    storage_net_base: int = 1
    groups: GroupParams = field(default_factory=GroupParams)


@dataclass(frozen=True, eq=False)
class Site:
    name: str
    description: str
    file: str
    digest: str  # sha256 of the inventory bytes (and CSV files), for output headers
    client_nets: tuple[ClientNet, ...]
    clients: Clients
    torus: Torus | None
    client_fabric: str  # name of the compute fabric for a fat-tree client side, or ''
    fabrics: tuple[Fabric, ...]
    routers: tuple[Router, ...]
    servers: tuple[Server, ...]
    filesystems: tuple[FileSystem, ...]
    strategy: StrategyParams
    #: LNet tunables per role (client, router, server), site-wide values merged in;
    #: only what the inventory sets (see lnetgen.tunables)
    tunables: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    #: The Lustre release of each role's hosts (``lustre:``; unknown when not stated)
    lustre: Targets = NO_TARGETS
    #: Component rates with their sources (``rates:``; None where the inventory gives none)
    rates: Rates = NO_RATES
    #: The client side when it is a dragonfly (``topology.kind: dragonfly``)
    dragonfly: Dragonfly | None = None

    def switch(self, name: str) -> Switch | None:
        for fabric in self.fabrics:
            for sw in fabric.switches:
                if sw.name == name:
                    return sw
        return None

    def switch_rate(self, component: str, switch: str) -> Rate | None:
        """``ib_link`` or ``uplink`` on ``switch``: the switch's own rate, else the site's."""
        sw = self.switch(switch)
        own = sw.rates.get(component) if sw is not None else None
        return own if own is not None else self.rates.get(component)

    def router(self, name: str) -> Router:
        for r in self.routers:
            if r.name == name:
                return r
        raise KeyError(name)

    def fabric(self, name: str) -> Fabric | None:
        for f in self.fabrics:
            if f.name == name:
                return f
        return None

    def server(self, name: str) -> Server:
        for s in self.servers:
            if s.name == name:
                return s
        raise KeyError(name)
