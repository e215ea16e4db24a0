"""Storage-fabric loads: the share of flows whose router and server sit on different leaf
modules (they cross the spine, using an uplink of each of the two leaves, spread evenly over a
leaf's uplinks), and the load on each leaf's uplinks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lnetgen.model import Site
from lnetgen.traffic.flows import Traffic
from lnetgen.traffic.index import PlanIndex


@dataclass(frozen=True)
class LeafLoad:
    leaf: str
    uplinks: int
    up: float  # flows leaving the leaf through its uplinks
    down: float  # flows entering it


@dataclass(frozen=True)
class SwitchCrossing:
    """Flows with an end (router or server) on ``switch`` whose router and server sit on
    different leaf modules: they cross that switch's spine (a director) or its uplinks (a
    TOR switch).  A flow between two switches crosses both, so the switches' figures add up
    to more than :attr:`FabricPhase.crossing` exactly by the flows between switches; on a
    fabric of one switch its figure is :attr:`FabricPhase.crossing`."""

    switch: str
    flows: float


@dataclass(frozen=True)
class FabricPhase:
    """One direction of bulk traffic on the storage fabric (flows)."""

    served: float  # flows that reach their destination
    crossing: float  # flows whose router and server are on different leaf modules
    inter_switch: float  # of those, flows between two different switches
    fraction: float  # crossing / served
    max_uplink: float  # flows on the most loaded uplink (one direction)
    mean_uplink: float  # mean over the uplinks (both directions) of the leaves in use
    max_leaf: str
    leaves: tuple[LeafLoad, ...]
    switches: tuple[SwitchCrossing, ...] = ()  # per switch in use, by name

    @property
    def imbalance(self) -> float:
        return self.max_uplink / self.mean_uplink if self.mean_uplink else 0.0


@dataclass(frozen=True)
class FabricReport:
    writes: FabricPhase  # client -> server: router leaf up, server leaf down
    reads: FabricPhase  # server -> client
    crossing_routes: int  # (router, server) pairs used at the best priority across the spine
    routes: int  # (router, server) pairs used at the best priority


def leaf_uplinks(site: Site, label: str) -> int:
    """Uplinks of leaf module ``label`` (``switch/leaf``); 1 when the inventory has none."""
    sw_name, _, leaf_name = label.partition("/")
    sw = site.switch(sw_name)
    leaf = sw.leaf(leaf_name) if sw is not None else None
    return max(int(leaf.uplinks), 1) if leaf is not None and leaf.uplinks else 1


def _switch(label: str) -> str:
    return label.partition("/")[0]


def fabric_report(ix: PlanIndex, tr: Traffic) -> FabricReport:
    """Spine crossings and leaf uplink loads of the flows ``tr``."""
    rleaf = list(ix.router_leaf)
    sleaf = list(ix.server_leaf)
    leaves = sorted(set(rleaf) | set(sleaf))
    lid = {lf: i for i, lf in enumerate(leaves)}
    rl = np.asarray([lid[x] for x in rleaf], dtype=np.int64)
    sl = np.asarray([lid[x] for x in sleaf], dtype=np.int64)
    cross = sl[:, None] != rl[None, :]  # (S, R)
    switches = sorted({_switch(x) for x in leaves})
    rsw = np.asarray([switches.index(_switch(x)) for x in rleaf], dtype=np.int64)
    ssw = np.asarray([switches.index(_switch(x)) for x in sleaf], dtype=np.int64)
    inter = ssw[:, None] != rsw[None, :]
    w_sr = tr.w_server
    phases = []
    for flows_sr in (w_sr, tr.v_server):
        x = flows_sr * cross
        served = float(flows_sr.sum())
        crossing = float(x.sum())
        inter_sw = float((flows_sr * inter).sum())
        router_side = np.bincount(rl, weights=x.sum(axis=0), minlength=len(leaves))
        server_side = np.bincount(sl, weights=x.sum(axis=1), minlength=len(leaves))
        # per switch: crossing flows with their router there, with their server there, less
        # those with both there (counted twice)
        n_sw = len(switches)
        both = np.bincount(ssw, weights=(x * ~inter).sum(axis=1), minlength=n_sw)
        per_sw = (
            np.bincount(rsw, weights=x.sum(axis=0), minlength=n_sw)
            + np.bincount(ssw, weights=x.sum(axis=1), minlength=n_sw)
            - both
        )
        by_switch = tuple(
            SwitchCrossing(name, max(float(per_sw[k]), 0.0)) for k, name in enumerate(switches)
        )
        phases.append((served, crossing, inter_sw, router_side, server_side, by_switch))
    uplinks = np.asarray([leaf_uplinks(ix.site, lf) for lf in leaves], dtype=np.float64)
    out = []
    for i, (served, crossing, inter_sw, router_side, server_side, by_switch) in enumerate(phases):
        # writes leave the router's leaf and enter the server's; reads the other way round
        up, down = (router_side, server_side) if i == 0 else (server_side, router_side)
        per_up = np.maximum(up, down) / uplinks
        mean = float((up + down).sum() / (2 * uplinks.sum())) if len(leaves) else 0.0
        top = int(np.argmax(per_up)) if len(leaves) else 0
        out.append(
            FabricPhase(
                served,
                crossing,
                inter_sw,
                crossing / served if served else 0.0,
                float(per_up[top]) if len(leaves) else 0.0,
                mean,
                leaves[top] if len(leaves) and per_up[top] > 0 else "",
                tuple(
                    LeafLoad(lf, int(uplinks[j]), float(up[j]), float(down[j]))
                    for j, lf in enumerate(leaves)
                ),
                by_switch,
            )
        )
    used = w_sr > 0
    return FabricReport(out[0], out[1], int((used & cross).sum()), int(used.sum()))
