"""Hops from clients to routers on whatever the client side is: torus hops with wrap-around
(seed 000 §5), fat-tree or dragonfly link counts (``lnetgen.topology``).

The one place that knows how each kind of client side measures distance; ``nearest-neighbor``
and placement use it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from lnetgen import topology
from lnetgen.model import Router, Site

IntArray = npt.NDArray[np.int64]


def has_distances(site: Site) -> bool:
    """Whether the client side says where clients sit (a torus, a fat tree or a dragonfly)."""
    return site.torus is not None or bool(site.clients.leaves) or site.dragonfly is not None


def router_switches(site: Site, routers: Sequence[Router]) -> IntArray:
    """Each router's dragonfly switch (``group * switches + switch``), -1 where it has no
    place; all -1 when the client side is not a dragonfly."""
    dfly = site.dragonfly
    S = dfly.switches if dfly is not None else 0
    return np.asarray(
        [-1 if r.dragonfly is None or not S else r.dragonfly[0] * S + r.dragonfly[1]
         for r in routers],
        dtype=np.int64,
    )  # fmt: skip


def client_router_hops(
    site: Site,
    clients: npt.NDArray[np.intp] | IntArray,
    routers: Sequence[Router],
    coords: IntArray | None = None,
) -> IntArray:
    """(clients x routers) hops from each client to each router.  ``coords``: the routers'
    torus positions when they differ from the inventory's (a plan's); ``ValueError`` without a
    client topology (see :func:`has_distances`)."""
    if site.torus is not None:
        if coords is None:
            coords = np.asarray([r.coords for r in routers], dtype=np.int64).reshape(-1, 3)
        return np.asarray(
            topology.torus_hops(site.clients.coords[clients], coords, site.torus.dims),
            dtype=np.int64,
        )
    dfly = site.dragonfly
    if dfly is not None and site.clients.switch is not None:
        rs = router_switches(site, routers)
        return topology.dragonfly_hops(
            site.clients.switch[clients][:, None], rs[None, :], dfly.switches
        )
    leaves = site.clients.leaves
    if leaves:
        rl = []
        for r in routers:
            m = r.client_attach.module if r.client_attach is not None else None
            rl.append(leaves.index(m) if m in leaves else -2)
        return topology.fat_tree_hops(
            site.clients.leaf[clients][:, None], np.asarray(rl, dtype=np.int64)[None, :]
        )
    raise ValueError("no client topology (a torus, a fat tree or a dragonfly) to measure distances")


__all__ = ["client_router_hops", "has_distances", "router_switches"]
