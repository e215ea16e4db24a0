"""xyz link loads from aggregated flows (lnetgen.traffic.xyz) equal laying out every flow."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen import topology
from lnetgen.traffic.xyz import xyz_phase


@st.composite
def cases(draw: st.DrawFn) -> tuple[object, ...]:
    dims = tuple(draw(st.integers(1, 5)) for _ in range(3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    nchips = draw(st.integers(1, 12))
    chip_xyz = np.stack([rng.integers(0, d, nchips) for d in dims], axis=1)
    rows = draw(st.integers(1, 20))
    keys = draw(st.integers(1, 4))
    routers = draw(st.integers(1, 6))
    row_chip = rng.integers(0, nchips, rows)
    row_key = rng.integers(0, keys, rows)
    matrix = rng.integers(0, 3, (keys, routers)).astype(np.float64) / 2
    router_xyz = np.stack([rng.integers(0, d, routers) for d in dims], axis=1)
    return dims, chip_xyz, row_chip, row_key, matrix, router_xyz


def _reference(
    dims: tuple[int, int, int],
    chip_xyz: np.ndarray,
    row_chip: np.ndarray,
    row_key: np.ndarray,
    matrix: np.ndarray,
    router_xyz: np.ndarray,
    reads: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every flow laid out link by link (``topology.path_links``)."""
    loads = np.zeros((*dims, 6))
    ports = np.zeros((len(router_xyz), 6))
    totals = np.zeros(len(router_xyz))
    for i, chip in enumerate(row_chip):
        for r, w in enumerate(matrix[row_key[i]]):
            if w <= 0:
                continue
            totals[r] += w
            a, b = tuple(chip_xyz[chip]), tuple(router_xyz[r])
            links = (
                topology.path_links(b, a, dims, "xyz")
                if reads
                else topology.path_links(a, b, dims, "xyz")
            )
            for link in links:
                loads[link.x, link.y, link.z, link.direction] += w
            if links:
                # writes: the port a flow arrives on is the side its last link comes from
                d = links[0].direction if reads else links[-1].direction ^ 1
                ports[r, d] += w
    return loads, ports, totals


@settings(max_examples=150, deadline=None)
@given(cases(), st.booleans())
def test_aggregated_xyz_loads_equal_every_flow_laid_out(
    case: tuple[object, ...], reads: bool
) -> None:
    dims, chip_xyz, row_chip, row_key, matrix, router_xyz = case
    got = xyz_phase(dims, chip_xyz, row_chip, row_key, matrix, router_xyz, reads)  # type: ignore[arg-type]
    want = _reference(dims, chip_xyz, row_chip, row_key, matrix, router_xyz, reads)  # type: ignore[arg-type]
    for g, w in zip(got, want, strict=True):
        assert np.allclose(g, w)
