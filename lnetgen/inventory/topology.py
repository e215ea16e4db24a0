"""The ``topology`` section: what the client side is, a torus, a fat tree or a dragonfly (or
not said).

Reads ``topology.kind`` and, for a torus, ``dims``, ``nodes_per_chip`` and ``routing``; for a
dragonfly its sizes; the schema has checked them, so nothing is reported here.  ``torus``
places clients on a torus, ``fattree`` attaches them to a compute fabric and ``dragonfly`` to
the switches of a dragonfly.  ``router_slots`` outside the torus are
E-TORUS-COORD.  Adds ``Site.torus``, ``Site.client_fabric`` and ``Site.dragonfly``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lnetgen.inventory.context import Context
from lnetgen.model import Dragonfly, Torus


@dataclass(frozen=True)
class Topology:
    section: dict[str, Any] | None  # as written; None when the inventory has none
    torus: Torus | None = None
    fat_tree: str | None = None  # the compute fabric the clients are attached to
    dragonfly: Dragonfly | None = None


def read_topology(data: dict[str, Any]) -> Topology:
    topo: dict[str, Any] | None = data.get("topology")
    if topo is None:
        return Topology(None)
    if topo["kind"] == "torus":
        dims = topo["dims"]
        torus = Torus(
            (dims[0], dims[1], dims[2]),
            topo.get("nodes_per_chip", 1),
            topo.get("routing", "xyz"),
            tuple((s[0], s[1], s[2]) for s in topo.get("router_slots", [])),
        )
        return Topology(topo, torus=torus)
    if topo["kind"] == "dragonfly":
        dfly = Dragonfly(
            topo["groups"],
            topo["switches_per_group"],
            topo["global_links"],
            topo.get("local_links", 1),
            topo.get("edge_ports", 0),
        )
        return Topology(topo, dragonfly=dfly)
    return Topology(topo, fat_tree=topo["fabric"])


def check_slots(ctx: Context, topo: Topology) -> None:
    """E-TORUS-COORD for a ``router_slots`` entry outside the torus."""
    if topo.torus is None:
        return
    for i, slot in enumerate(topo.torus.slots):
        if any(v >= n for v, n in zip(slot, topo.torus.dims, strict=True)):
            ctx.err(
                ("topology", "router_slots", i),
                "E-TORUS-COORD",
                f"router slot {list(slot)} is outside the torus {list(topo.torus.dims)} "
                "(coordinates count from 0)",
            )
