"""The hosts of a plan that have their own NIs: routers and servers, each NI an ``Interface``.

A router or server with Multi-Rail ports (inventory ``rails``) has several NIs on one net; the
first is the NID routes, pairing and mount strings name, the others are the same LNet peer.
``lnetgen.plan`` re-exports these classes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Interface:
    net: str
    nid: str
    interface: str


@dataclass(frozen=True)
class RouterPlan:
    name: str
    leaf: str
    coords: tuple[int, int, int] | None
    interfaces: tuple[Interface, ...]  # client side first, then storage nets by name

    @property
    def networks(self) -> tuple[str, ...]:
        """The nets the router has an NI on, each once, in interface order."""
        return tuple(dict.fromkeys(i.net for i in self.interfaces))

    def nid_on(self, net: str) -> str | None:
        """The router's first NID on ``net`` (the one routes name; further NIDs on the same net
        are its Multi-Rail ports, the same LNet peer)."""
        for i in self.interfaces:
            if i.net == net:
                return i.nid
        return None


@dataclass(frozen=True)
class ServerPlan:
    """One server: its storage-net NID (what clients use) and, when its fabric has one, its NID
    on the fabric's server net (same interface and IP; only servers use it)."""

    name: str
    role: str
    fs: str
    nid: str
    net: str
    interface: str
    leaf: str
    server_net: str = ""
    server_nid: str = ""
    failover: str = ""
    #: the NIs of the server's Multi-Rail ports (``Site`` servers' ``rails``): each rail on the
    #: storage net, then each on the server net; same LNet peer as ``nid``
    rails: tuple[Interface, ...] = ()

    @property
    def nids(self) -> tuple[str, ...]:
        """The server's first NID on each of its nets, storage net first (what mount strings,
        routes and pairing name)."""
        return (self.nid, self.server_nid) if self.server_nid else (self.nid,)

    @property
    def all_nids(self) -> tuple[str, ...]:
        """Every NID of the server, Multi-Rail ports included, grouped by net as
        :attr:`interfaces` (what ``mkfs.lustre`` lists for one node)."""
        return tuple(i.nid for i in self.interfaces)

    @property
    def client_nids(self) -> tuple[str, ...]:
        """The NIDs clients may use: every NID on the storage net, first port first."""
        return tuple(i.nid for i in self.interfaces if i.net == self.net)

    @property
    def interfaces(self) -> tuple[Interface, ...]:
        """Every NI of the server, grouped by net (storage net first), the first port before
        its rails."""
        out: list[Interface] = []
        for net, nid in zip(self.networks, self.nids, strict=True):
            out.append(Interface(net, nid, self.interface))
            out.extend(i for i in self.rails if i.net == net)
        return tuple(out)

    @property
    def networks(self) -> tuple[str, ...]:
        return (self.net, self.server_net) if self.server_net else (self.net,)
