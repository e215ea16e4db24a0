"""Torus link loads: every flow between a client and its router follows dimension-order
routing (``topology.link_loads`` with the site's routing mode); per directed link the flows it
carries, summarized per phase, and per router the links its own flows use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lnetgen import topology
from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.traffic.flows import Traffic, traffic
from lnetgen.traffic.index import PlanIndex
from lnetgen.traffic.routes import fail_state
from lnetgen.traffic.rows import evaluate
from lnetgen.traffic.settings import (
    BoolArray,
    FloatArray,
    IntArray,
    Settings,
    Workload,
    rounded,
    settings_for,
)
from lnetgen.traffic.xyz import xyz_phase

#: Port names of a router's six torus links, by the side the neighbour is on.
PORTS = topology.DIRECTIONS


@dataclass(frozen=True)
class LinkStats:
    """Flows per directed torus link for one phase."""

    max: float
    p99: float
    mean: float  # over every directed link of the torus (``topology.real_links``)
    used: int  # links carrying any flow
    links: int  # directed links of the torus: none along a dimension of size 1
    saturated: int  # links whose flows exceed link_mb_s / ost_mb_s
    volume: float  # sum over links = sum over flows of flow x hops
    top: tuple[tuple[str, float], ...]  # the ten most loaded links, "(x,y,z)X+"


@dataclass(frozen=True)
class RouterUse:
    """A router on the torus: clients it serves at the best live priority, flows it takes in
    (writes) and sends out (reads), and how those use its six links (by neighbour side)."""

    name: str
    coords: tuple[int, int, int]
    clients: int
    writes: float
    reads: float
    writes_in: tuple[float, ...]  # per port, PORTS order
    reads_out: tuple[float, ...]


@dataclass(frozen=True)
class TorusReport:
    dims: tuple[int, int, int]
    routing: str
    saturation: float
    writes: LinkStats
    reads: LinkStats
    routers: tuple[RouterUse, ...]


def _link_stats(loads: FloatArray, saturation: float) -> LinkStats:
    """The phase's figures over the torus's real links (``topology.real_links``: none along a
    dimension of size 1, one pair per position along one of size 2), so that ``links``,
    ``mean`` and ``p99`` count no slot that no flow can take."""
    whole = loads.reshape(-1)
    order = np.lexsort((np.arange(len(whole)), -whole))[:10]
    shape = loads.shape
    top = []
    for i in order.tolist():
        if whole[i] <= 0:
            break
        x, y, z, d = np.unravel_index(i, shape)
        top.append((topology.Link(int(x), int(y), int(z), int(d)).name, rounded(whole[i])))
    flat = loads[topology.real_links(shape[:3])]
    return LinkStats(
        rounded(flat.max(initial=0.0)),
        rounded(np.percentile(flat, 99)) if len(flat) else 0.0,
        rounded(flat.mean()) if len(flat) else 0.0,
        int((flat > 1e-12).sum()),
        len(flat),
        int((flat > saturation + 1e-9).sum()),
        rounded(flat.sum()),
        tuple(top),
    )


#: Flows per ``link_loads`` call when per-router ports are not wanted (bounds memory).
_BATCH_FLOWS = 500_000

_Loads = tuple[list[FloatArray], list[FloatArray], list[FloatArray]]


#: Link loads are kept as dense (X, Y, Z, 6) arrays: the bound an inventory is validated
#: against, checked again for a library caller that builds a ``Site`` by hand.
MAX_DENSE_CHIPS = topology.MAX_TORUS_CHIPS


def check_volume(file: str, dims: tuple[int, int, int]) -> None:
    """Raise ``InputError`` (``E-TORUS-SIZE``) when link loads of a torus of ``dims`` would not
    fit the dense model's bound, instead of allocating them."""
    chips = dims[0] * dims[1] * dims[2]
    if chips > MAX_DENSE_CHIPS:
        raise InputError(
            [
                Diagnostic(
                    file,
                    0,
                    0,
                    "error",
                    "E-TORUS-SIZE",
                    "$.topology.dims",
                    f"a {dims[0]}x{dims[1]}x{dims[2]} torus has {chips} chips; torus link "
                    f"loads are modelled for at most {MAX_DENSE_CHIPS} chips",
                )
            ]
        )


def _link_loads(ix: PlanIndex, tr: Traffic, ports: bool = True) -> _Loads | None:
    """Link loads of all flows: ([writes, reads] as (X, Y, Z, 6) arrays, per-router port use
    [writes in, reads out] as (R, 6), per-router totals).  Under ``xyz`` routing the flows
    are summed before they are laid out (``lnetgen.traffic.xyz``: linear in the clients);
    under ``seastar`` each router's flows are laid out as below.  With ``ports`` each router's flows
    go through ``topology.link_loads`` on their own, so that the links they arrive on (writes)
    and leave by (reads) can be read off at the router; without, flows are batched (same
    totals, fewer calls) and the per-port figures are zero.  None without a torus."""
    site = ix.site
    if site.torus is None or ix.router_coords is None:
        return None
    dims = site.torus.dims
    check_volume(site.file, dims)
    mode = site.torus.routing
    coords = np.asarray(site.clients.coords, dtype=np.int64)
    lin = np.ravel_multi_index(coords.T, dims) if len(coords) else np.zeros(0, dtype=np.int64)
    chips, chip_of = np.unique(lin, return_inverse=True)
    chip_of = chip_of.reshape(-1)
    chip_xyz = np.stack(np.unravel_index(chips, dims), axis=1).astype(np.int64)
    R = len(ix.routers)
    if mode == "xyz":  # summed before laid out: grows with the chips, not clients x routers
        w_phase = xyz_phase(
            dims, chip_xyz, chip_of[tr.w_client], tr.w_key, tr.w_matrix, ix.router_coords, False
        )
        r_phase = xyz_phase(
            dims, chip_xyz, chip_of[tr.r_client], tr.r_key, tr.r_matrix, ix.router_coords, True
        )
        if not ports:
            w_phase[1][:] = 0
            r_phase[1][:] = 0
        return (
            [w_phase[0], r_phase[0]],
            [w_phase[1], r_phase[1]],
            [w_phase[2], r_phase[2]],
        )
    loads_by_phase = [np.zeros((*dims, 6)), np.zeros((*dims, 6))]
    port = [np.zeros((R, 6)), np.zeros((R, 6))]  # writes in, reads out
    total = [np.zeros(R), np.zeros(R)]
    pending: list[list[tuple[IntArray, IntArray, FloatArray]]] = [[], []]
    pending_n = [0, 0]

    def flush(phase: int) -> None:
        if not pending[phase]:
            return
        chip = np.concatenate([p[0] for p in pending[phase]])
        rtr = np.concatenate([p[1] for p in pending[phase]])
        w = np.concatenate([p[2] for p in pending[phase]])
        src, dst = chip_xyz[chip], ix.router_coords[rtr]  # type: ignore[index]
        if phase == 1:
            src, dst = dst, src
        loads_by_phase[phase] += topology.link_loads(src, dst, dims, mode, weights=w)
        pending[phase].clear()
        pending_n[phase] = 0

    for r in range(R):
        rc = ix.router_coords[r]
        for phase in (0, 1):
            client, key, mat = (
                (tr.w_client, tr.w_key, tr.w_matrix)
                if phase == 0
                else (tr.r_client, tr.r_key, tr.r_matrix)
            )
            if not len(key):
                continue
            w = mat[key, r]
            nz = w > 0
            if not nz.any():
                continue
            per_chip = np.bincount(chip_of[client[nz]], weights=w[nz], minlength=len(chips))
            sel = np.nonzero(per_chip > 0)[0]
            total[phase][r] = per_chip.sum()
            if not ports:
                pending[phase].append(
                    (
                        sel.astype(np.int64),
                        np.full(len(sel), r, dtype=np.int64),
                        np.asarray(per_chip[sel], dtype=np.float64),
                    )
                )
                pending_n[phase] += len(sel)
                if pending_n[phase] >= _BATCH_FLOWS:
                    flush(phase)
                continue
            chip_src = chip_xyz[sel]
            at = np.broadcast_to(rc, chip_src.shape)
            if phase == 0:
                loads = topology.link_loads(chip_src, at, dims, mode, weights=per_chip[sel])
                for axis in range(3):
                    for side in (0, 1):  # neighbour on the + side, then on the - side
                        nb = rc.copy()
                        nb[axis] = (nb[axis] + (1 if side == 0 else -1)) % dims[axis]
                        # arriving from the + neighbour means travelling in the - direction
                        port[0][r, 2 * axis + side] = loads[
                            nb[0], nb[1], nb[2], 2 * axis + 1 - side
                        ]
            else:
                loads = topology.link_loads(at, chip_src, dims, mode, weights=per_chip[sel])
                port[1][r] = loads[rc[0], rc[1], rc[2]]
            loads_by_phase[phase] += loads
    flush(0)
    flush(1)
    return loads_by_phase, port, total


def link_load_arrays(
    ix: PlanIndex, fail: Sequence[str] = (), workload: Workload | None = None
) -> tuple[FloatArray, FloatArray] | None:
    """Flows per directed torus link for writes (client -> router) and reads (router ->
    client), each (X, Y, Z, 6) in ``topology.DIRECTIONS`` order, with ``fail`` down: the loads
    ``analyze`` summarizes.  None when the client side is not a torus."""
    mask, carrier = fail_state(ix, fail)
    got = _link_loads(ix, traffic(ix, mask, workload, carrier), ports=False)
    if got is None:
        return None
    writes, reads = got[0]
    for loads in (writes, reads):
        loads[np.abs(loads) < 1e-9] = 0.0  # float residue of the difference arrays
    return writes, reads


def torus_report(
    ix: PlanIndex, tr: Traffic, settings: Settings, mask: BoolArray, ports: bool = True
) -> TorusReport | None:
    """Summaries of ``_link_loads`` (see there for ``ports``); ``mask``: the routers down."""
    got = _link_loads(ix, tr, ports)
    if got is None:
        return None
    site = ix.site
    assert site.torus is not None and ix.router_coords is not None
    dims = site.torus.dims
    R = len(ix.routers)
    loads_by_phase, port, total = got
    mode = site.torus.routing
    wl, rl = loads_by_phase
    w_in, r_out = port
    w_tot, r_tot = total
    # clients served: members of classes with an active route through the router
    client = ix.sides()[0]
    cst = evaluate(client.rows, client.nkeys, mask)
    a = cst.active
    cls = client.rows.key[a] // max(client.width, 1)
    pairs = np.unique(cls * max(R, 1) + client.rows.router[a])
    served = np.bincount(pairs % max(R, 1), weights=client.size[pairs // max(R, 1)], minlength=R)
    routers = tuple(
        RouterUse(
            ix.routers[r],
            (int(ix.router_coords[r][0]), int(ix.router_coords[r][1]), int(ix.router_coords[r][2])),
            int(served[r]),
            rounded(w_tot[r]),
            rounded(r_tot[r]),
            tuple(rounded(v) for v in w_in[r]),
            tuple(rounded(v) for v in r_out[r]),
        )
        for r in range(R)
    )
    return TorusReport(
        dims,
        mode,
        rounded(settings.saturation),
        _link_stats(wl, settings.saturation),
        _link_stats(rl, settings.saturation),
        routers,
    )


def torus_loads(
    ix: PlanIndex,
    workload: Workload | None,
    settings: Settings | None = None,
    fail: Sequence[str] = (),
    ports: bool = False,
) -> TorusReport | None:
    """Just the torus part of :func:`lnetgen.analyze.analyze` (placement comparisons use it);
    per-router port figures only with ``ports``.  None without a torus client side."""
    settings = settings or settings_for(ix.site)
    mask, carrier = fail_state(ix, fail)
    return torus_report(ix, traffic(ix, mask, workload, carrier), settings, mask, ports)
