"""Dragonfly client side: how much client <-> router traffic stays on a client's own switch or
group, how much crosses a global link, and the busiest pair of groups.

Flows go the minimal way (``lnetgen.topology.dragonfly_hops``): on the client's switch, over
one local link inside its group, or over the global links between two groups.  The global
links of one pair of groups are counted as one bundle per direction (``global_links`` of them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lnetgen import topology
from lnetgen.traffic.flows import Traffic
from lnetgen.traffic.index import PlanIndex
from lnetgen.traffic.settings import FloatArray, IntArray, rounded


@dataclass(frozen=True)
class GroupFlows:
    """One direction's flows (writes client -> router, reads router -> client)."""

    flows: float
    same_switch: float
    same_group: float  # over one local link
    cross_group: float  # over a global link
    busiest: str  # "g0->g4", or "" when nothing crosses
    busiest_flows: float


@dataclass(frozen=True)
class DragonflyReport:
    groups: int
    switches: int
    global_links: int
    writes: GroupFlows
    reads: GroupFlows


def _direction(
    ix: PlanIndex, client: IntArray, key: IntArray, matrix: FloatArray, reads: bool
) -> GroupFlows:
    site = ix.site
    dfly = site.dragonfly
    assert dfly is not None and site.clients.switch is not None
    S, G = dfly.switches, dfly.groups
    assert ix.router_switch is not None
    r_sw = ix.router_switch
    if not len(key):
        return GroupFlows(0.0, 0.0, 0.0, 0.0, "", 0.0)
    # flows from each client switch to each router: clients summed per (switch, key) first;
    # only switches that hold a client, and only the (switch, router) pairs that carry a flow,
    # are laid out (every switch x every router was 2 GiB on a large machine)
    c_sw = site.clients.switch[client].astype(np.int64)
    used, s_inv = np.unique(c_sw, return_inverse=True)
    ukey, kinv = np.unique(key, return_inverse=True)
    flat = s_inv.reshape(-1) * len(ukey) + kinv.reshape(-1)
    count = np.bincount(flat, minlength=len(used) * len(ukey))
    per = count.reshape(len(used), len(ukey)).astype(np.float64) @ matrix[ukey]  # (used, R)
    row, col = np.nonzero(per)
    cs, rs, w = used[row], r_sw[col], per[row, col]
    known = rs >= 0
    hops = topology.dragonfly_hops(cs, rs, S)
    same_sw = known & (hops == 2)
    same_g = known & (hops == 3)
    glob = known & (hops == topology.DRAGONFLY_GLOBAL_HOPS)
    src, dst = (rs // S, cs // S) if reads else (cs // S, rs // S)
    # summed per group pair that carries a flow (a G x G array was 2 GiB at 16,384 groups)
    pairs, p_inv = np.unique((src * G + dst)[glob], return_inverse=True)
    pair = np.bincount(p_inv.reshape(-1), weights=w[glob], minlength=len(pairs))
    busiest, most = "", 0.0
    if pair.max(initial=0.0) > 0:
        k = int(pairs[int(np.argmax(pair))])
        busiest, most = f"g{k // G}->g{k % G}", float(pair.max())
    return GroupFlows(
        rounded(float(w.sum())),
        rounded(float(w[same_sw].sum())),
        rounded(float(w[same_g].sum())),
        rounded(float(w[glob].sum())),
        busiest,
        rounded(most),
    )


def dragonfly_report(ix: PlanIndex, tr: Traffic) -> DragonflyReport | None:
    """The report, or None when the client side is not a dragonfly."""
    site = ix.site
    dfly = site.dragonfly
    if dfly is None or site.clients.switch is None:
        return None
    return DragonflyReport(
        dfly.groups,
        dfly.switches,
        dfly.global_links,
        _direction(ix, tr.w_client, tr.w_key, tr.w_matrix, reads=False),
        _direction(ix, tr.r_client, tr.r_key, tr.r_matrix, reads=True),
    )


__all__ = ["DragonflyReport", "GroupFlows", "dragonfly_report"]
