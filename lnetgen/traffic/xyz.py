"""Torus link loads under ``xyz`` dimension-order routing (Gemini), from aggregated flows.

Every client sends to (and reads from) many routers: with the groups layout on 100,000 clients
that is 100,000 x 784 client-router flows, and building each flow's path grows with clients
times routers.  Under ``xyz`` routing a flow's legs sit at positions that depend on few
coordinates, so flows can be summed before they are laid out:

* writes, client ``s`` -> router ``d``: the X leg runs at ``(., s.y, s.z)`` from ``s.x`` to
  ``d.x``, the Y leg at ``(d.x, ., s.z)`` from ``s.y`` to ``d.y``, the Z leg at ``(d.x, d.y, .)``
  from ``s.z`` to ``d.z``;
* reads, router ``d`` -> client ``s``: X at ``(., d.y, d.z)``, Y at ``(s.x, ., d.z)``, Z at
  ``(s.x, s.y, .)``.

So the X legs of writes only need the flows summed per (client chip, router X), the Y legs per
(client Y-Z line, router X-Y), the Z legs per (client Z plane, router) -- a few times the
chips in all, whatever the router count.  Each sum is a sparse product of a clients-by-key count
matrix with the key-by-router flow matrix (``Traffic``), and each leg is laid out as a one-axis
flow by ``topology.link_loads``.  The router ports a flow arrives on (writes) or leaves by
(reads) come from its last or first leg, read off the same sums; only the clients on a router's
own X line (Y and Z equal) are paired with it one by one.

Exactly the loads of laying out every flow (``tests/test_torus_xyz.py`` compares both on random
tori); ``lnetgen.traffic.torus`` uses this for ``xyz`` sites.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lnetgen import topology
from lnetgen.traffic.settings import FloatArray, IntArray

#: (loads (X, Y, Z, 6), ports (R, 6), totals (R,)) of one direction of traffic.
Phase = tuple[FloatArray, FloatArray, FloatArray]


def _counts(group: IntArray, ngroups: int, key: IntArray, nkeys: int) -> sp.csr_matrix:
    """(ngroups, nkeys): how many flow rows of each key sit in each group."""
    ones = np.ones(len(group), dtype=np.float64)
    return sp.csr_matrix((ones, (group, key)), shape=(ngroups, nkeys))


def _onehot(col: IntArray, ncols: int) -> sp.csr_matrix:
    """(len(col), ncols) with a 1 at (i, col[i])."""
    n = len(col)
    return sp.csr_matrix((np.ones(n), (np.arange(n), col)), shape=(n, ncols))


def _entries(m: sp.spmatrix) -> tuple[IntArray, IntArray, FloatArray]:
    coo = sp.coo_matrix(m)
    keep = coo.data > 0
    return coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64), coo.data[keep]


def _direction(src: IntArray, dst: IntArray, length: int, axis: int) -> IntArray:
    """Direction index (``topology.DIRECTIONS``) of a move along ``axis`` (a tie: positive)."""
    fwd = (dst - src) % length
    return 2 * axis + np.where(fwd <= length - fwd, 0, 1)


def xyz_phase(
    dims: tuple[int, int, int],
    chip_xyz: IntArray,
    row_chip: IntArray,
    row_key: IntArray,
    matrix: FloatArray,
    router_xyz: IntArray,
    reads: bool,
) -> Phase:
    """Link loads, router port use and router totals of one direction of traffic: flow row
    ``i`` on chip ``chip_xyz[row_chip[i]]`` sends ``matrix[row_key[i], r]`` flows to router
    ``r`` at ``router_xyz[r]`` (writes), or receives them from it (``reads``)."""
    X, Y, Z = dims
    R = len(router_xyz)
    K = matrix.shape[0]
    m = sp.csr_matrix(matrix)
    loads = np.zeros((*dims, 6))
    ports = np.zeros((R, 6))
    totals = np.asarray(np.bincount(row_key, minlength=K) @ matrix, dtype=np.float64)
    if not len(row_chip) or not R:
        return loads, ports, totals
    cx, cy, cz = (chip_xyz[row_chip, k] for k in range(3))
    rx, ry, rz = router_xyz[:, 0], router_xyz[:, 1], router_xyz[:, 2]
    srcs: list[IntArray] = []
    dsts: list[IntArray] = []
    weights: list[FloatArray] = []

    def leg(src: IntArray, dst: IntArray, w: FloatArray) -> None:
        srcs.append(src)
        dsts.append(dst)
        weights.append(w)

    def port(r: IntArray, d: IntArray, w: FloatArray) -> None:
        np.add.at(ports, (r, d), w)

    if not reads:
        # X legs: per (client chip, router X)
        chips = chip_xyz.shape[0]
        g = _counts(row_chip, chips, row_key, K)
        chip, dx, w = _entries(g @ (m @ _onehot(rx, X)))
        s = chip_xyz[chip]
        leg(s, np.stack([dx, s[:, 1], s[:, 2]], axis=1), w)
        # Y legs: per (client Y-Z line, router X-Y)
        line, dxy, w = _entries(
            _counts(cy * Z + cz, Y * Z, row_key, K) @ (m @ _onehot(rx * Y + ry, X * Y))
        )
        ly, lz, dx, dy = line // Z, line % Z, dxy // Y, dxy % Y
        leg(np.stack([dx, ly, lz], axis=1), np.stack([dx, dy, lz], axis=1), w)
        # Z legs: per (client Z plane, router); the port each write arrives on is its last leg
        sz, r, w = _entries(_counts(cz, Z, row_key, K) @ m)
        leg(np.stack([rx[r], ry[r], sz], axis=1), router_xyz[r], w)
        moved = sz != rz[r]
        port(r[moved], _direction(sz[moved], rz[r][moved], Z, 2) ^ 1, w[moved])
        # writes arriving along Y: clients in the router's Z plane, off its Y
        line, r, w = _entries(_counts(cy * Z + cz, Y * Z, row_key, K) @ m)
        ly, lz = line // Z, line % Z
        last_y = (lz == rz[r]) & (ly != ry[r])
        port(r[last_y], _direction(ly[last_y], ry[r][last_y], Y, 1) ^ 1, w[last_y])
        # writes arriving along X: clients on the router's X line
        i, r = _same_line(cy * Z + cz, ry * Z + rz)
        w = matrix[row_key[i], r]
        off = (cx[i] != rx[r]) & (w > 0)
        port(r[off], _direction(cx[i][off], rx[r][off], X, 0) ^ 1, w[off])
    else:
        # X legs: per (client X, router), leaving the router first when X differs
        sx, r, w = _entries(_counts(cx, X, row_key, K) @ m)
        leg(router_xyz[r], np.stack([sx, ry[r], rz[r]], axis=1), w)
        moved = sx != rx[r]
        port(r[moved], _direction(rx[r][moved], sx[moved], X, 0), w[moved])
        # Y legs: per (client X-Y column, router)
        col, r, w = _entries(_counts(cx * Y + cy, X * Y, row_key, K) @ m)
        sx, sy = col // Y, col % Y
        leg(np.stack([sx, ry[r], rz[r]], axis=1), np.stack([sx, sy, rz[r]], axis=1), w)
        first_y = (sx == rx[r]) & (sy != ry[r])
        port(r[first_y], _direction(ry[r][first_y], sy[first_y], Y, 1), w[first_y])
        # Z legs: per (client chip, router Z)
        chips = chip_xyz.shape[0]
        chip, dz, w = _entries(_counts(row_chip, chips, row_key, K) @ (m @ _onehot(rz, Z)))
        s = chip_xyz[chip]
        leg(np.stack([s[:, 0], s[:, 1], dz], axis=1), s, w)
        # reads leaving along Z: clients on the router's Z line (X and Y equal)
        i, r = _same_line(cx * Y + cy, rx * Y + ry)
        w = matrix[row_key[i], r]
        off = (cz[i] != rz[r]) & (w > 0)
        port(r[off], _direction(rz[r][off], cz[i][off], Z, 2), w[off])
    if srcs:
        src, dst = np.concatenate(srcs), np.concatenate(dsts)
        w = np.concatenate(weights)
        loads += topology.link_loads(src, dst, dims, "xyz", weights=w)
    return loads, ports, totals


def _same_line(row_line: IntArray, router_line: IntArray) -> tuple[IntArray, IntArray]:
    """Every (flow row, router) pair on the same line: few (a line holds a handful of chips)."""
    order = np.argsort(row_line, kind="stable")
    sorted_lines = row_line[order]
    lo = np.searchsorted(sorted_lines, router_line, side="left")
    hi = np.searchsorted(sorted_lines, router_line, side="right")
    n = hi - lo
    r = np.repeat(np.arange(len(router_line)), n)
    start = np.repeat(lo - np.concatenate([[0], np.cumsum(n)[:-1]]), n)
    i = order[np.arange(int(n.sum())) + start]
    return i.astype(np.int64), r.astype(np.int64)
