"""A fat-tree client side: which compute-fabric leaf and port each client is cabled to.

Reads ``topology.fabric`` and ``topology.attach[]`` (``nodes``, ``switch``, ``leaf``,
``first_port``): consecutive ports from ``first_port``, one per node in node-set order.
Reports E-ATTACH-FABRIC, E-ATTACH-NODE (strangers, clients attached twice or not at all),
E-ATTACH-PORT and, through ``Fabrics.attach``, the other attachment codes; claims every
client's port for the site-wide duplicate check.
Adds ``Site.clients.leaf``, ``.leaves`` and ``.ports``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lnetgen import nodes
from lnetgen.inventory.clients import expand, no_strangers
from lnetgen.inventory.context import Context
from lnetgen.inventory.fabrics import Fabrics
from lnetgen.model import Attachment
from lnetgen.yamlsrc import Path


@dataclass(frozen=True)
class FatTreePlaces:
    leaf: npt.NDArray[np.int32]  # index into leaves of each client
    leaves: tuple[tuple[str, str], ...]  # (switch, leaf) modules, in order of first use
    ports: npt.NDArray[np.int32]  # leaf port of each client


def fat_tree_places(
    ctx: Context, fabrics: Fabrics, fabric: str, names: list[str]
) -> FatTreePlaces | None:
    """Where each client is attached, or None when some are not, or wrongly (reported)."""
    if fabrics.roles.get(fabric) != "compute":
        what = (
            "is not defined"
            if fabric not in fabrics.roles
            else (f"has role {fabrics.roles[fabric]!r}")
        )
        ctx.err(
            ("topology", "fabric"),
            "E-ATTACH-FABRIC",
            f"the clients' fabric {fabric!r} {what}; it must be a fabric with role 'compute'",
        )
        return None
    places = _Places(ctx, fabrics, fabric, names)
    ok = True
    all_parsed = True
    for ai, at in enumerate(ctx.data["topology"]["attach"]):
        p: Path = ("topology", "attach", ai)
        members = expand(ctx, at["nodes"], (*p, "nodes"))
        if members is None:
            ok = all_parsed = False
            continue
        ok = places.add(at, members, p) and ok
    if all_parsed and not places.named.all():
        loose = [names[int(k)] for k in np.nonzero(~places.named)[0][:1000]]
        ctx.err(
            ("topology", "attach"),
            "E-ATTACH-NODE",
            f"{int((~places.named).sum())} client(s) are not attached to the fabric: "
            f"{nodes.fold(loose)}",
        )
        return None
    if not ok:
        return None
    leaves = tuple(sorted(places.leaf_id, key=lambda m: places.leaf_id[m]))
    return FatTreePlaces(places.leaf, leaves, places.ports)


class _Places:
    """The attachments read so far."""

    def __init__(self, ctx: Context, fabrics: Fabrics, fabric: str, names: list[str]) -> None:
        self.ctx = ctx
        self.fabrics = fabrics
        self.fabric = fabric
        self.index = {m: k for k, m in enumerate(names)}
        self.leaf = np.full(len(names), -1, dtype=np.int32)
        self.ports = np.zeros(len(names), dtype=np.int32)
        self.leaf_id: dict[tuple[str, str], int] = {}
        self.named = np.zeros(len(names), dtype=bool)  # named by some entry, attached or not

    def add(self, at: dict[str, Any], members: list[str], p: Path) -> bool:
        """Attach the nodes of one ``topology.attach`` entry; False when they cannot be."""
        ctx, index = self.ctx, self.index
        for m in members:
            if m in index:
                self.named[index[m]] = True
        if not no_strangers(ctx, members, index, (*p, "nodes")):
            return False
        first = at.get("first_port", 1)
        spec = {"switch": at["switch"], "port": first}
        if "leaf" in at:
            spec["leaf"] = at["leaf"]
        a = self.fabrics.attach(ctx, spec, p, "compute", at["nodes"])
        if a is None:
            return False
        ports = self.fabrics.switches[a.switch].leaf(a.leaf)
        last = first + len(members) - 1
        if ports is not None and last > ports.ports:
            ctx.err(
                (*p, "nodes"),
                "E-ATTACH-PORT",
                f"{len(members)} nodes from port {first} need ports up to {last}, but "
                f"{a.label()} has {ports.ports} external ports",
            )
            return False
        if self.fabrics.fabric_of(a) != self.fabric:
            ctx.err(
                (*p, "switch"),
                "E-ATTACH-FABRIC",
                f"{a.switch} is on fabric {self.fabrics.fabric_of(a)!r}, "
                f"not on the clients' fabric {self.fabric!r}",
            )
            return False
        twice = [m for m in members if self.leaf[index[m]] >= 0]
        if twice:
            ctx.err(
                (*p, "nodes"),
                "E-ATTACH-NODE",
                f"{nodes.fold(twice[:1000])} attached twice (also by an earlier entry)",
            )
            return False
        lid = self.leaf_id.setdefault(a.module, len(self.leaf_id))
        for k, m in enumerate(members):
            self.leaf[index[m]] = lid
            self.ports[index[m]] = first + k
            ctx.ports.claim(Attachment(a.switch, a.leaf, first + k), (*p, "nodes"), m)
        return True
