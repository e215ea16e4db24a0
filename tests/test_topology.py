"""Torus hops, dimension-order paths and link loads, checked against hand-worked examples and
against each other (link_loads == sum of path_links over random flows)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen.topology import (
    DIRECTIONS,
    ROUTING_MODES,
    Link,
    fat_tree_hops,
    flow_hops,
    link_loads,
    path_links,
    torus_hops,
)

XP, XM, YP, YM, ZP, ZM = range(6)


# ----------------------------------------------------------------------------- hop distances


@pytest.mark.parametrize(
    ("dims", "a", "b", "hops"),
    [
        ((4, 4, 4), (0, 0, 0), (0, 0, 0), 0),
        ((4, 4, 4), (0, 0, 0), (3, 3, 3), 3),  # 1 + 1 + 1, all by wrap-around
        ((4, 4, 4), (0, 0, 0), (2, 2, 2), 6),  # half of each ring: 2 + 2 + 2
        ((4, 4, 4), (1, 2, 3), (3, 0, 1), 6),
        ((4, 4, 4), (0, 1, 3), (1, 3, 0), 4),  # 1 + 2 + 1
        ((5, 3, 2), (0, 0, 0), (4, 2, 1), 3),  # min(4,1) + min(2,1) + 1
        ((5, 3, 2), (1, 0, 0), (3, 1, 1), 4),  # 2 + 1 + 1
        ((5, 3, 2), (0, 0, 0), (2, 0, 0), 2),
        ((5, 3, 2), (0, 0, 0), (3, 0, 0), 2),  # the other way round
        ((5, 3, 2), (4, 2, 1), (1, 1, 0), 4),  # 2 + 1 + 1
        ((1, 1, 7), (0, 0, 1), (0, 0, 6), 2),
    ],
)
def test_torus_hops_by_hand(
    dims: tuple[int, int, int], a: tuple[int, ...], b: tuple[int, ...], hops: int
) -> None:
    assert torus_hops(np.array([a]), np.array([b]), dims).tolist() == [[hops]]
    assert torus_hops(np.array([b]), np.array([a]), dims).tolist() == [[hops]]
    assert flow_hops(np.array([a]), np.array([b]), dims).tolist() == [hops]


def test_torus_hops_table() -> None:
    a = np.array([[0, 0, 0], [1, 2, 3], [3, 3, 3]])
    b = np.array([[0, 0, 0], [2, 2, 2]])
    got = torus_hops(a, b, (4, 4, 4))
    assert got.shape == (3, 2)
    assert got.tolist() == [[0, 6], [4, 2], [3, 3]]
    assert torus_hops(a[:0], b, (4, 4, 4)).shape == (0, 2)


def test_torus_hops_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="outside"):
        torus_hops(np.array([[4, 0, 0]]), np.array([[0, 0, 0]]), (4, 4, 4))
    with pytest.raises(ValueError, match="outside"):
        torus_hops(np.array([[0, 0, 0]]), np.array([[0, -1, 0]]), (4, 4, 4))
    with pytest.raises(ValueError, match=r"\(N, 3\)"):
        torus_hops(np.array([0, 0, 0]), np.array([[0, 0, 0]]), (4, 4, 4))
    with pytest.raises(ValueError, match="3 entries"):
        torus_hops(np.array([[0, 0, 0]]), np.array([[0, 0, 0]]), (4, 4))
    with pytest.raises(ValueError, match="integers"):
        torus_hops(np.array([[0.5, 0, 0]]), np.array([[0, 0, 0]]), (4, 4, 4))


def test_fat_tree_hops() -> None:
    assert fat_tree_hops(np.array([0, 1, 2]), np.array([0, 0, 2])).tolist() == [2, 4, 2]
    table = fat_tree_hops(np.array([0, 1, -1])[:, None], np.array([0, 1, -1, -2])[None, :])
    assert table.tolist() == [[2, 4, 4, 4], [4, 2, 4, 4], [4, 4, 4, 4]]


# ----------------------------------------------------------------------------- paths


def L(x: int, y: int, z: int, d: int) -> Link:
    return Link(x, y, z, d)


@pytest.mark.parametrize(
    ("dims", "src", "dst", "xyz", "seastar"),
    [
        # all moves positive (the Y offset is half the ring: a tie, taken positive): the modes
        # agree
        (
            (4, 4, 4),
            (0, 0, 0),
            (1, 2, 3),
            [L(0, 0, 0, XP), L(1, 0, 0, YP), L(1, 1, 0, YP), L(1, 2, 0, ZM)],
            [L(0, 0, 0, XP), L(1, 0, 0, YP), L(1, 1, 0, YP), L(1, 2, 0, ZM)],
        ),
        # X- then Y+: xyz turns at the destination's X, seastar does Y+ first
        (
            (4, 4, 4),
            (1, 0, 0),
            (0, 1, 0),
            [L(1, 0, 0, XM), L(0, 0, 0, YP)],
            [L(1, 0, 0, YP), L(1, 1, 0, XM)],
        ),
        # all negative: the modes agree
        (
            (4, 4, 4),
            (3, 3, 3),
            (2, 2, 2),
            [L(3, 3, 3, XM), L(2, 3, 3, YM), L(2, 2, 3, ZM)],
            [L(3, 3, 3, XM), L(2, 3, 3, YM), L(2, 2, 3, ZM)],
        ),
        # tie on an even ring goes positive, wrapping 3 -> 0 -> 1
        (
            (4, 4, 4),
            (3, 0, 0),
            (1, 0, 0),
            [L(3, 0, 0, XP), L(0, 0, 0, XP)],
            [L(3, 0, 0, XP), L(0, 0, 0, XP)],
        ),
        # 5x3x2: X+ 4->0->1 (2 hops, wrapping), Y- 2->1, Z 1->0 is a tie on a ring of 2: Z+
        (
            (5, 3, 2),
            (4, 2, 1),
            (1, 1, 0),
            [L(4, 2, 1, XP), L(0, 2, 1, XP), L(1, 2, 1, YM), L(1, 1, 1, ZP)],
            [L(4, 2, 1, XP), L(0, 2, 1, XP), L(1, 2, 1, ZP), L(1, 2, 0, YM)],
        ),
        # 5x3x2: X- 2->1->0, Y+ 0->1, Z+ 0->1; seastar: Y+, Z+, then X-
        (
            (5, 3, 2),
            (2, 0, 0),
            (0, 1, 1),
            [L(2, 0, 0, XM), L(1, 0, 0, XM), L(0, 0, 0, YP), L(0, 1, 0, ZP)],
            [L(2, 0, 0, YP), L(2, 1, 0, ZP), L(2, 1, 1, XM), L(1, 1, 1, XM)],
        ),
        # 5x3x2: X- by wrap-around 0->4, Z+; Y untouched
        (
            (5, 3, 2),
            (0, 1, 0),
            (4, 1, 1),
            [L(0, 1, 0, XM), L(4, 1, 0, ZP)],
            [L(0, 1, 0, ZP), L(0, 1, 1, XM)],
        ),
        # same chip: no links
        ((5, 3, 2), (3, 2, 1), (3, 2, 1), [], []),
    ],
)
def test_paths_by_hand(
    dims: tuple[int, int, int],
    src: tuple[int, int, int],
    dst: tuple[int, int, int],
    xyz: list[Link],
    seastar: list[Link],
) -> None:
    assert path_links(src, dst, dims, "xyz") == xyz
    assert path_links(src, dst, dims, "seastar") == seastar
    for mode, links in (("xyz", xyz), ("seastar", seastar)):
        loads = link_loads(np.array([src]), np.array([dst]), dims, mode)
        expected = np.zeros((*dims, 6), dtype=np.int64)
        for link in links:
            expected[link] += 1
        assert np.array_equal(loads, expected)


def test_link_names() -> None:
    assert DIRECTIONS == ("X+", "X-", "Y+", "Y-", "Z+", "Z-")
    assert Link(1, 2, 0, YM).name == "(1,2,0)Y-"


def test_bad_mode_and_shapes() -> None:
    with pytest.raises(ValueError, match="routing mode"):
        path_links((0, 0, 0), (1, 0, 0), (4, 4, 4), "adaptive")
    with pytest.raises(ValueError, match="routing mode"):
        link_loads(np.zeros((1, 3), int), np.zeros((1, 3), int), (4, 4, 4), "zyx")
    with pytest.raises(ValueError, match="same shape"):
        link_loads(np.zeros((2, 3), int), np.zeros((1, 3), int), (4, 4, 4), "xyz")
    with pytest.raises(ValueError, match="weights"):
        link_loads(np.zeros((2, 3), int), np.zeros((2, 3), int), (4, 4, 4), "xyz", [1, 2, 3])


def test_no_flows() -> None:
    empty = np.zeros((0, 3), dtype=np.int64)
    loads = link_loads(empty, empty, (5, 3, 2), "seastar")
    assert loads.shape == (5, 3, 2, 6)
    assert loads.dtype == np.int64
    assert not loads.any()


def test_float_weights() -> None:
    src = np.array([[0, 0, 0], [0, 0, 0]])
    dst = np.array([[2, 0, 0], [1, 0, 0]])
    loads = link_loads(src, dst, (5, 3, 2), "xyz", np.array([0.5, 0.25]))
    assert loads.dtype == np.float64
    assert loads[0, 0, 0, XP] == pytest.approx(0.75)
    assert loads[1, 0, 0, XP] == pytest.approx(0.5)
    assert loads.sum() == pytest.approx(1.25)


# ----------------------------------------------------------------------------- properties


@st.composite
def flows(draw: st.DrawFn) -> tuple[tuple[int, int, int], np.ndarray, np.ndarray, np.ndarray, str]:
    dims = (draw(st.integers(1, 6)), draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    n = draw(st.integers(0, 25))
    chip = st.tuples(*(st.integers(0, d - 1) for d in dims))
    src = np.array(draw(st.lists(chip, min_size=n, max_size=n)), dtype=np.int64).reshape(n, 3)
    dst = np.array(draw(st.lists(chip, min_size=n, max_size=n)), dtype=np.int64).reshape(n, 3)
    weights = np.array(draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)), dtype=np.int64)
    return dims, src, dst, weights, draw(st.sampled_from(ROUTING_MODES))


def _walk(link: Link, dims: tuple[int, int, int]) -> tuple[int, int, int]:
    pos = [link.x, link.y, link.z]
    axis, negative = divmod(link.direction, 2)
    pos[axis] = (pos[axis] + (-1 if negative else 1)) % dims[axis]
    return pos[0], pos[1], pos[2]


@settings(max_examples=200, deadline=None)
@given(flows())
def test_link_loads_is_sum_of_paths(
    case: tuple[tuple[int, int, int], np.ndarray, np.ndarray, np.ndarray, str],
) -> None:
    dims, src, dst, weights, mode = case
    counted: Counter[Link] = Counter()
    weighted: Counter[Link] = Counter()
    hops = torus_hops(src, dst, dims).diagonal() if len(src) else np.zeros(0, int)
    for f in range(len(src)):
        s = (int(src[f, 0]), int(src[f, 1]), int(src[f, 2]))
        t = (int(dst[f, 0]), int(dst[f, 1]), int(dst[f, 2]))
        links = path_links(s, t, dims, mode)
        assert len(links) == hops[f]  # paths are minimal
        pos = s
        for link in links:  # and connected, from src to dst
            assert (link.x, link.y, link.z) == pos
            pos = _walk(link, dims)
        assert pos == t
        counted.update(links)
        for link in links:
            weighted[link] += int(weights[f])
    for w, expected_counts in ((None, counted), (weights, weighted)):
        loads = link_loads(src, dst, dims, mode, w)
        assert loads.dtype == np.int64
        expected = np.zeros((*dims, 6), dtype=np.int64)
        for link, k in expected_counts.items():
            expected[link] = k
        assert np.array_equal(loads, expected)
    assert int(link_loads(src, dst, dims, mode).sum()) == int(flow_hops(src, dst, dims).sum())
