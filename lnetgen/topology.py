"""Client-side network geometry: torus hop distances, dimension-order paths and link loads, and
fat-tree and dragonfly hop counts.

Everything here works on numpy arrays of chip coordinates, vectorized over clients and flows;
nothing loops over clients in Python except :func:`path_links`, which follows one flow and
exists to check the vectorized code by hand.

A directed torus link is named by the chip it leaves and one of six directions
(:data:`DIRECTIONS`, index ``2 * axis + (1 if negative else 0)``).

Routing (how a flow picks its links), as the papers state it and as read here:

* In each dimension a flow goes the shorter way around the ring, so its length in hops is the
  distance of :func:`torus_hops`.  When both ways are equally long (an even ring, offset exactly
  half of it) neither paper says which is taken; here the positive direction is, in both modes.
* ``"xyz"`` -- Gemini (seed 001, §III.C): "Data moving from point A to point B in this torus
  first travels along the X dimension, then along the Y dimension, then along the Z dimension."
* ``"seastar"`` -- SeaStar2+ (seed 000, §4): "packets are routed in a fix dimension order (X+,
  Y+, Z+, X-, Y-, Z-)".  Read as six phases in that order: a flow makes all of its moves in the
  positive direction first (X, then Y, then Z, for those dimensions whose shorter way is
  positive), then all of its negative moves (X, then Y, then Z).  The paper does not say how the
  direction of a dimension is chosen; shortest-way-around is assumed, as it is what the
  paper's hop-distance formula (§5) counts.  The two modes differ only when a flow goes in the
  negative direction in one dimension and the positive one in a later dimension: e.g. from
  (1, 0, 0) to (0, 1, 0), xyz takes X- at (1, 0, 0) then Y+ at (0, 0, 0), while seastar takes Y+
  at (1, 0, 0) then X- at (1, 1, 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

#: Link directions, in the order of the last axis of :func:`link_loads`.
DIRECTIONS: tuple[str, ...] = ("X+", "X-", "Y+", "Y-", "Z+", "Z-")
#: Routing modes accepted by :func:`path_links` and :func:`link_loads`.
ROUTING_MODES: tuple[str, ...] = ("seastar", "xyz")
#: The largest torus, in chips, whose link loads are modelled: they are dense (X, Y, Z, 6)
#: arrays, two per analysis, about 200 MB at 2,000,000 chips (126^3).  An inventory may describe
#: no larger box (``lnetgen.inventory.topology``, E-TORUS-SIZE); the largest 3-D tori built are
#: far smaller (Jaguar 19,200 chips, Blue Waters 13,248).
MAX_TORUS_CHIPS = 2_000_000

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class Link(NamedTuple):
    """A directed torus link: it leaves chip (x, y, z) in direction ``DIRECTIONS[direction]``."""

    x: int
    y: int
    z: int
    direction: int

    @property
    def name(self) -> str:
        """``"(x,y,z)X+"``, for messages."""
        return f"({self.x},{self.y},{self.z}){DIRECTIONS[self.direction]}"


# ----------------------------------------------------------------------------- validation


def _dims(dims: Sequence[int]) -> tuple[int, int, int]:
    if len(dims) != 3:
        raise ValueError(f"torus dims must have 3 entries, got {list(dims)}")
    out = (int(dims[0]), int(dims[1]), int(dims[2]))
    if min(out) < 1:
        raise ValueError(f"torus dims must be positive, got {list(out)}")
    return out


def _coords(a: Any, dims: tuple[int, int, int], what: str) -> IntArray:
    arr = np.asarray(a)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{what}: expected an (N, 3) array of coordinates, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{what}: coordinates must be integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size:
        bad = np.nonzero(((arr < 0) | (arr >= np.asarray(dims))).any(axis=1))[0]
        if len(bad):
            raise ValueError(
                f"{what}: row {int(bad[0])} {arr[bad[0]].tolist()} is outside the "
                f"{dims[0]}x{dims[1]}x{dims[2]} torus"
            )
    return arr


def _mode(mode: str) -> str:
    if mode not in ROUTING_MODES:
        raise ValueError(f"unknown routing mode {mode!r}; expected one of {list(ROUTING_MODES)}")
    return mode


# ----------------------------------------------------------------------------- distances


def torus_hops(a: Any, b: Any, dims: Sequence[int]) -> IntArray:
    """Hop distances between every chip of ``a`` (N, 3) and every chip of ``b`` (M, 3): (N, M).

    Seed 000 §5: ``h(n1, n2) = d_x + d_y + d_z`` with
    ``d_axis = min((n1_axis - n2_axis) mod L_axis, (n2_axis - n1_axis) mod L_axis)``,
    i.e. the shorter way around each ring of the torus.  Raises ``ValueError`` for a wrong shape
    or a coordinate outside ``dims``.
    """
    d3 = _dims(dims)
    pa = _coords(a, d3, "a")
    pb = _coords(b, d3, "b")
    # per axis, the ring distance of every coordinate pair looked up in an (L, L) table: one
    # gather per axis on small integers instead of three passes of int64 arithmetic
    small = np.int16 if max(d3) < 1 << 14 else np.int64
    out = np.zeros((len(pa), len(pb)), dtype=small)
    for axis, length in enumerate(d3):
        ring = np.arange(length)
        fwd = (ring[:, None] - ring[None, :]) % length
        table = np.minimum(fwd, length - fwd).astype(small)
        out += table[pa[:, axis]][:, pb[:, axis]]
    return out.astype(np.int64)


def flow_hops(src: Any, dst: Any, dims: Sequence[int]) -> IntArray:
    """Hop distance of each flow ``src[f] -> dst[f]`` ((F, 3) each): (F,), formula as in
    :func:`torus_hops`.  Raises ``ValueError`` for mismatched shapes or out-of-range coordinates.
    """
    d3 = _dims(dims)
    s = _coords(src, d3, "src")
    t = _coords(dst, d3, "dst")
    if s.shape != t.shape:
        raise ValueError(f"src and dst must have the same shape, got {s.shape} and {t.shape}")
    length = np.asarray(d3, dtype=np.int64)
    fwd = (t - s) % length
    hops: IntArray = np.minimum(fwd, length - fwd).sum(axis=1).astype(np.int64)
    return hops


def fat_tree_hops(leaf_a: Any, leaf_b: Any) -> IntArray:
    """Link count between hosts on leaf switches ``leaf_a`` and ``leaf_b`` (numpy broadcasting).

    2 on the same leaf (host-leaf-host), 4 otherwise (host-leaf-spine-leaf-host).  A negative
    leaf index means "not on a known leaf" and is never the same leaf as anything, itself
    included.  Pass ``leaf[:, None]`` and ``leaf[None, :]`` for an (N, M) table.
    """
    la = np.asarray(leaf_a)
    lb = np.asarray(leaf_b)
    same = (la == lb) & (la >= 0)
    return np.where(same, 2, 4).astype(np.int64)


#: Links on a dragonfly route that crosses a global link (:func:`dragonfly_hops`).
DRAGONFLY_GLOBAL_HOPS = 5


def dragonfly_hops(switch_a: Any, switch_b: Any, switches: int) -> IntArray:
    """Link count between hosts on dragonfly switches ``switch_a`` and ``switch_b`` (numbered
    ``group * switches + switch``; numpy broadcasting).

    2 on the same switch (host-switch-host), 3 in the same group (the group's switches are
    linked all-to-all), 5 between groups: host, local link, global link, local link, host --
    the longest minimal route, as the global links of a group are spread over its switches and
    which switch holds the link to which group is not in the inventory.  A negative switch is
    "not on a known switch": another group than anything, itself included.
    """
    a = np.asarray(switch_a)
    b = np.asarray(switch_b)
    known = (a >= 0) & (b >= 0)
    same_group = known & (a // switches == b // switches)
    return np.where(known & (a == b), 2, np.where(same_group, 3, DRAGONFLY_GLOBAL_HOPS)).astype(
        np.int64
    )


# ----------------------------------------------------------------------------- routing


def _legs(
    src: IntArray, dst: IntArray, d3: tuple[int, int, int], mode: str
) -> tuple[IntArray, npt.NDArray[np.bool_], IntArray]:
    """Per flow and axis: hops, whether the move is positive, and the phase it happens in."""
    length = np.asarray(d3, dtype=np.int64)
    fwd = (dst - src) % length
    positive = fwd <= length - fwd  # a tie (half the ring) goes the positive way
    hops = np.where(positive, fwd, length - fwd)
    axis = np.arange(3, dtype=np.int64)
    if mode == "xyz":
        phase = np.broadcast_to(axis, src.shape).copy()
    else:  # seastar: X+, Y+, Z+, X-, Y-, Z-
        phase = axis + np.where(positive, 0, 3)
    return hops, positive, phase


def path_links(
    src: Sequence[int], dst: Sequence[int], dims: Sequence[int], mode: str
) -> list[Link]:
    """The directed links one flow from chip ``src`` to chip ``dst`` uses, in travel order.

    ``mode`` is ``"xyz"`` or ``"seastar"`` (see the module docstring).  Raises ``ValueError``
    for an unknown mode or a coordinate outside ``dims``.
    """
    d3 = _dims(dims)
    mode = _mode(mode)
    s = _coords(np.asarray([src]), d3, "src")
    t = _coords(np.asarray([dst]), d3, "dst")
    hops, positive, phase = (v[0] for v in _legs(s, t, d3, mode))
    pos = [int(v) for v in s[0]]
    links: list[Link] = []
    for axis in sorted(range(3), key=lambda k: int(phase[k])):
        step = 1 if positive[axis] else -1
        direction = 2 * axis + (0 if positive[axis] else 1)
        for _ in range(int(hops[axis])):
            links.append(Link(pos[0], pos[1], pos[2], direction))
            pos[axis] = (pos[axis] + step) % d3[axis]
    return links


def link_loads(
    src: Any, dst: Any, dims: Sequence[int], mode: str, weights: Any = None
) -> npt.NDArray[Any]:
    """Flows per directed link for flows ``src[f] -> dst[f]`` ((F, 3) chip coordinates each).

    Returns an array of shape (X, Y, Z, 6): ``loads[x, y, z, k]`` is the number of flows (or the
    sum of their ``weights``) leaving chip (x, y, z) in direction ``DIRECTIONS[k]``.  The result
    is int64 when ``weights`` is None or integer (exact while sums stay below 2**53), float64
    for float weights (exact up to rounding: an idle link may show a residue ~1e-16).  Raises
    ``ValueError`` for mismatched shapes, an unknown mode or a coordinate outside ``dims``.

    Each flow moves along one axis at a time over a contiguous run of links, so the loads are
    built per axis and direction from a difference array (+w at the run's first link, -w just
    after its last) summed cumulatively along that axis; the ring's wrap-around is handled by
    unrolling the axis to twice its length and folding the two halves.
    """
    d3 = _dims(dims)
    mode = _mode(mode)
    s = _coords(src, d3, "src")
    t = _coords(dst, d3, "dst")
    if s.shape != t.shape:
        raise ValueError(f"src and dst must have the same shape, got {s.shape} and {t.shape}")
    nflows = len(s)
    integral = True
    w: npt.NDArray[Any] | None = None
    if weights is not None:
        w = np.asarray(weights)
        if w.shape != (nflows,):
            raise ValueError(f"weights must have shape ({nflows},), got {w.shape}")
        integral = bool(np.issubdtype(w.dtype, np.integer) or w.dtype == np.bool_)
        w = w.astype(np.float64)
    loads = runs_loads(_runs(s, t, d3, mode, sums=False), w)
    if w is not None and integral:
        return np.asarray(np.rint(loads), dtype=np.int64)
    return loads


def real_links(dims: Sequence[int]) -> npt.NDArray[np.bool_]:
    """Which slots of a (X, Y, Z, 6) :func:`link_loads` array are links routing can use --
    what link counts, means and percentiles are taken over.

    A dimension of size 1 has no link (its slots would leave and re-enter the same chip); a
    dimension of size 2 has one link pair per ring position: chip 0's ``+`` link reaches chip
    1 and chip 1's ``+`` link chip 0, and as a tie (half the ring) goes the positive way, no
    flow takes a ``-`` slot there (counting them doubled the links and halved the mean).  From
    size 3 both directions are links.  So an 8x1x1 torus has 16 directed links, not 48."""
    d3 = _dims(dims)
    mask = np.zeros((*d3, 6), dtype=np.bool_)
    for axis, n in enumerate(d3):
        mask[..., 2 * axis] = n >= 2
        mask[..., 2 * axis + 1] = n >= 3
    return mask


class Segment(NamedTuple):
    """The moves of some flows along one axis in one direction, as runs on a doubled ring:
    flow ``sel[i]`` covers positions ``lo[i] .. hi[i]-1`` (flat indices into an array of
    ``shape``, the axis doubled) of direction ``direction``."""

    axis: int
    direction: int
    sel: IntArray
    lo: IntArray
    hi: IntArray
    shape: tuple[int, int, int]
    lo_at: tuple[IntArray, IntArray, IntArray]  # the same positions as coordinates
    hi_at: tuple[IntArray, IntArray, IntArray]


_EMPTY = np.zeros(0, dtype=np.int64)
_NO_AT = (_EMPTY, _EMPTY, _EMPTY)


class Runs(NamedTuple):
    """Every flow's path as runs (:func:`runs`), to lay out loads or sum values many times."""

    dims: tuple[int, int, int]
    nflows: int
    segments: tuple[Segment, ...]


def runs(src: Any, dst: Any, dims: Sequence[int], mode: str, sums: bool = True) -> Runs:
    """The paths of flows ``src[f] -> dst[f]`` as runs, computed once for
    :func:`runs_loads` and :func:`runs_sums` (what :func:`link_loads` and :func:`path_sums`
    do in one go).  ``sums`` False leaves out the coordinates only :func:`runs_sums` reads."""
    d3 = _dims(dims)
    mode = _mode(mode)
    s = _coords(src, d3, "src")
    t = _coords(dst, d3, "dst")
    if s.shape != t.shape:
        raise ValueError(f"src and dst must have the same shape, got {s.shape} and {t.shape}")
    return _runs(s, t, d3, mode, sums)


def _runs(s: IntArray, t: IntArray, d3: tuple[int, int, int], mode: str, sums: bool) -> Runs:
    """:func:`runs` on checked coordinates."""
    hops, positive, phase = _legs(s, t, d3, mode)
    segs: list[Segment] = []
    for axis in range(3):
        n = d3[axis]
        at = s.copy()
        for k in (k for k in range(3) if k != axis):
            done = phase[:, k] < phase[:, axis]
            at[:, k] = np.where(done, t[:, k], s[:, k])
        shape = list(d3)
        shape[axis] = 2 * n
        for negative in (False, True):
            sel = np.nonzero((hops[:, axis] > 0) & (positive[:, axis] == (not negative)))[0]
            if not len(sel):
                continue
            h = hops[sel, axis]
            # a negative run from s covers s, s-1, ..., s-h+1: the same links as the run of
            # length h that starts at s-h+1 (mod n), so both signs are positive-going runs here
            first = (s[sel, axis] - (h - 1) if negative else s[sel, axis]) % n
            lo = at[sel].copy()
            lo[:, axis] = first
            hi = lo.copy()
            hi[:, axis] = first + h
            sh3 = (shape[0], shape[1], shape[2])
            segs.append(
                Segment(
                    axis,
                    2 * axis + int(negative),
                    sel.astype(np.int64),
                    np.asarray(np.ravel_multi_index(lo.T, sh3), dtype=np.int64),
                    np.asarray(np.ravel_multi_index(hi.T, sh3), dtype=np.int64),
                    sh3,
                    (lo[:, 0], lo[:, 1], lo[:, 2]) if sums else _NO_AT,
                    (hi[:, 0], hi[:, 1], hi[:, 2]) if sums else _NO_AT,
                )
            )
    return Runs(d3, len(s), tuple(segs))


def runs_loads(r: Runs, weights: FloatArray | None = None) -> npt.NDArray[Any]:
    """Flows (int64, ``weights`` None) or the sum of ``weights`` (float64) per directed link,
    for precomputed runs: per axis and direction a difference array (+w at a run's first
    link, -w just after its last) summed along the axis; the ring's wrap-around is handled by
    unrolling the axis to twice its length and folding the two halves."""
    loads = np.zeros((*r.dims, 6), dtype=np.int64 if weights is None else np.float64)
    for g in r.segments:
        n = r.dims[g.axis]
        size = g.shape[0] * g.shape[1] * g.shape[2]
        w = None if weights is None else weights[g.sel]
        diff = np.bincount(g.lo, weights=w, minlength=size) - np.bincount(
            g.hi, weights=w, minlength=size
        )
        run = np.cumsum(diff.reshape(g.shape), axis=g.axis)
        loads[..., g.direction] += np.take(run, np.arange(n), axis=g.axis) + np.take(
            run, np.arange(n, 2 * n), axis=g.axis
        )
    return loads


def runs_sums(r: Runs, values: FloatArray) -> FloatArray:
    """Like :func:`path_sums`, for precomputed runs."""
    out = np.zeros(r.nflows)
    for g in r.segments:
        ring = values[..., g.direction]
        doubled = np.concatenate([ring, ring], axis=g.axis)
        pad = [(0, 0)] * 3
        pad[g.axis] = (1, 0)
        # prefix[..., i, ...] = the sum of the first i links along the axis
        prefix = np.pad(np.cumsum(doubled, axis=g.axis), pad)
        out[g.sel] += prefix[g.hi_at] - prefix[g.lo_at]
    return out


def path_sums(src: Any, dst: Any, dims: Sequence[int], mode: str, values: Any) -> FloatArray:
    """Per flow ``src[f] -> dst[f]``, the sum of ``values`` (shape (X, Y, Z, 6), one figure per
    directed link) over the links of its path -- the transpose of :func:`link_loads`.

    With ``values`` a 0/1 mask of saturated links this says which flows cross one; the same
    runs as :func:`link_loads`, read off prefix sums along each ring (doubled for the
    wrap-around), so the cost is linear in flows plus links.
    """
    d3 = _dims(dims)
    mode = _mode(mode)
    s = _coords(src, d3, "src")
    t = _coords(dst, d3, "dst")
    v = np.asarray(values, dtype=np.float64)
    if v.shape != (*d3, 6):
        raise ValueError(f"values must have shape {(*d3, 6)}, got {v.shape}")
    return runs_sums(_runs(s, t, d3, mode, sums=True), v)
