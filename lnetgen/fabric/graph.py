"""The port graph every other module of the package reads or writes, and how GUIDs are spelled.

An :class:`IbNet` is a list of nodes (switch chips and channel adapters) with their GUIDs, node
descriptions and cabled ports: the same things ``ibnetdiscover`` prints.  A node's id is
ibnetdiscover's too: ``S-<guid>`` for a switch, ``H-<guid>`` for a channel adapter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def guid_int(text: str) -> int:
    """``0x0002c903...``, ``0002c903...`` or ``2c903...`` (ibnetdiscover's bracketed form)."""
    t = text.strip().lower()
    return int(t[2:] if t.startswith("0x") else t, 16)


def guid_str(value: int) -> str:
    """The one spelling lnetgen writes: ``0x`` and 16 hex digits."""
    return f"0x{value:016x}"


def node_id(kind: str, guid: int) -> str:
    """ibnetdiscover's id of a node: ``S-<guid>`` for a switch, ``R-<guid>`` for a router,
    ``H-<guid>`` for a CA."""
    return f"{_ID_LETTER.get(kind, 'H')}-{guid:016x}"


_ID_LETTER = {"switch": "S", "router": "R"}


def name_list(items: Sequence[str], n: int = 8) -> str:
    """The first ``n`` names, then how many more: notes stay one line on a big fabric."""
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


@dataclass(frozen=True)
class IbLink:
    """Local ``port`` cabled to ``peer`` (a node id) at ``peer_port``."""

    port: int
    peer: str
    peer_port: int


@dataclass(frozen=True)
class IbNode:
    """A switch chip or a channel adapter, as ibnetdiscover names and describes it."""

    kind: str  # switch | ca
    guid: int  # node GUID
    ports: int
    desc: str
    links: tuple[IbLink, ...]
    port_guids: tuple[tuple[int, int], ...] = ()  # CA: (port, port GUID)
    sysimg_guid: int = 0

    @property
    def id(self) -> str:
        return node_id(self.kind, self.guid)

    def port_guid(self, port: int) -> int:
        """A switch answers with its node GUID on every port; a CA port has its own."""
        if self.kind == "switch":
            return self.guid
        for p, g in self.port_guids:
            if p == port:
                return g
        return self.guid + port


@dataclass(frozen=True)
class IbNet:
    nodes: tuple[IbNode, ...]

    def by_id(self) -> dict[str, IbNode]:
        return {n.id: n for n in self.nodes}
