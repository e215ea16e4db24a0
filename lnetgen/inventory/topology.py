"""The ``topology`` section: what the client side is, a torus, a fat tree or a dragonfly (or
not said).

Reads ``topology.kind`` and, for a torus, ``dims``, ``nodes_per_chip`` and ``routing``; for a
dragonfly its sizes; the schema has checked them, so nothing is reported here.  ``torus``
places clients on a torus, ``fattree`` attaches them to a compute fabric and ``dragonfly`` to
the switches of a dragonfly.  ``router_slots`` outside the torus are
E-TORUS-COORD; a torus of more than ``MAX_TORUS_CHIPS`` chips is E-TORUS-SIZE, a dragonfly of
more than ``MAX_DRAGONFLY_SWITCHES`` switches E-SCHEMA.  Adds
``Site.torus``, ``Site.client_fabric`` and ``Site.dragonfly``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lnetgen.inventory.context import Context
from lnetgen.model import Dragonfly, Torus
from lnetgen.topology import MAX_TORUS_CHIPS  # the dense link-load model's bound

#: The largest dragonfly an inventory may describe, in switches (``groups`` times
#: ``switches_per_group``), three times the largest built (Aurora: 166 groups of 32 switches).
#: ``analyze``, ``compare`` and ``report`` hold the flows from every switch to every router:
#: 4,096 groups of 4,096 switches passed ``validate`` and ran them out of memory (2 GiB for one
#: array, a traceback), while 16,384 switches and 16 routers take under 400 MB.
MAX_DRAGONFLY_SWITCHES = 16_384


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


def check_size(ctx: Context, topo: Topology) -> bool:
    """E-TORUS-SIZE at ``topology.dims`` for a torus over ``MAX_TORUS_CHIPS`` chips, E-SCHEMA
    at ``topology.groups`` for a dragonfly over ``MAX_DRAGONFLY_SWITCHES`` switches; whether
    the client side is within the bound."""
    if topo.dragonfly is not None:
        return _dragonfly_size(ctx, topo.dragonfly)
    if topo.torus is None:
        return True
    x, y, z = topo.torus.dims
    chips = x * y * z
    if chips <= MAX_TORUS_CHIPS:
        return True
    ctx.err(
        ("topology", "dims"),
        "E-TORUS-SIZE",
        f"a {x}x{y}x{z} torus has {chips:,} chips; torus link loads are modelled for at most "
        f"{MAX_TORUS_CHIPS:,} (the largest tori built have about 20,000)",
    )
    return False


def _dragonfly_size(ctx: Context, dfly: Dragonfly) -> bool:
    switches = dfly.groups * dfly.switches
    if switches <= MAX_DRAGONFLY_SWITCHES:
        return True
    ctx.err(
        ("topology", "groups"),
        "E-SCHEMA",
        f"a dragonfly of {dfly.groups} groups of {dfly.switches} switches has {switches:,} "
        f"switches; lnetgen models at most {MAX_DRAGONFLY_SWITCHES:,} (the largest built have "
        "about 5,000)",
    )
    return False
