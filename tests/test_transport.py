"""transport.assign: feasible, minimal (checked against networkx min-cost flow), deterministic."""

from __future__ import annotations

import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen.transport import assign


def reference_cost(cost: np.ndarray, cap: np.ndarray) -> int:
    """Optimal total cost by networkx's network simplex on the client/router flow graph."""
    n, r = cost.shape
    g = nx.DiGraph()
    g.add_node("t", demand=n)
    for i in range(n):
        g.add_node(("c", i), demand=-1)
        for j in range(r):
            g.add_edge(("c", i), ("r", j), capacity=1, weight=int(cost[i, j]))
    for j in range(r):
        g.add_edge(("r", j), "t", capacity=int(cap[j]), weight=0)
    return int(nx.min_cost_flow_cost(g))


def total(cost: np.ndarray, pick: np.ndarray) -> int:
    return int(cost[np.arange(len(cost)), pick].sum())


def test_by_hand() -> None:
    # everyone prefers router 0 (room for 2): the client losing least by moving (client 0,
    # +1) goes to router 1
    cost = np.array([[1, 2], [1, 3], [1, 5]])
    assert assign(cost, np.array([2, 2])).tolist() == [1, 0, 0]
    # router 1 holds clients 1 and 2 but has room for one: client 1 moves to router 0 for +1
    # (client 2 would cost +9)
    cost = np.array([[0, 5, 5], [1, 0, 9], [9, 0, 9], [9, 9, 0]])
    pick = assign(cost, np.array([2, 1, 1]))
    assert pick.tolist() == [0, 0, 1, 2]
    assert total(cost, pick) == 1


def test_chain_through_a_full_router() -> None:
    # router 0 is over-full; the only cheap way out is 0 -> 1 for client 0 while client 2
    # moves 1 -> 2 (router 1 is full): total +1 +1 instead of +10
    cost = np.array([[0, 1, 10], [0, 10, 10], [10, 0, 1]])
    pick = assign(cost, np.array([1, 1, 1]))
    assert pick.tolist() == [1, 0, 2]
    assert total(cost, pick) == 2


def test_uncapacitated_is_argmin() -> None:
    cost = np.array([[3, 1, 2], [0, 0, 0], [5, 4, 4]])
    assert assign(cost, np.array([3, 3, 3])).tolist() == [1, 0, 1]  # ties: lowest index


def test_zero_capacity_router_unused() -> None:
    cost = np.array([[0, 5], [0, 5]])
    assert assign(cost, np.array([0, 2])).tolist() == [1, 1]


def test_empty_and_infeasible() -> None:
    assert assign(np.zeros((0, 3), dtype=int), np.array([0, 0, 0])).tolist() == []
    with pytest.raises(ValueError, match=r"infeasible: 3 clients .* only 2"):
        assign(np.zeros((3, 2), dtype=int), np.array([1, 1]))
    with pytest.raises(ValueError, match="infeasible"):
        assign(np.zeros((1, 0), dtype=int), np.zeros(0, dtype=int))


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="2-D"):
        assign(np.zeros(3, dtype=int), np.array([3]))
    with pytest.raises(ValueError, match="shape"):
        assign(np.zeros((3, 2), dtype=int), np.array([3, 3, 3]))
    with pytest.raises(ValueError, match="integer"):
        assign(np.zeros((3, 2)), np.array([3, 3]))
    with pytest.raises(ValueError, match="negative"):
        assign(np.zeros((3, 2), dtype=int), np.array([4, -1]))
    with pytest.raises(ValueError, match="within"):
        assign(np.array([[2**50, 0]]), np.array([1, 1]))


@st.composite
def instances(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(0, 12))
    r = draw(st.integers(1, 5))
    # narrow cost ranges make many ties; wide ones make all moves distinct
    hi = draw(st.sampled_from([1, 3, 10, 1000]))
    lo = draw(st.sampled_from([0, -hi]))
    values = st.integers(lo, hi)
    cost = np.array(
        draw(st.lists(st.lists(values, min_size=r, max_size=r), min_size=n, max_size=n)),
        dtype=np.int64,
    ).reshape(n, r)
    cap = np.array(
        draw(st.lists(st.integers(0, max(1, n)), min_size=r, max_size=r)), dtype=np.int64
    )
    return cost, cap


@settings(max_examples=300, deadline=None)
@given(instances())
def test_optimal_like_networkx(case: tuple[np.ndarray, np.ndarray]) -> None:
    cost, cap = case
    n, r = cost.shape
    if int(cap.sum()) < n:
        with pytest.raises(ValueError, match="infeasible"):
            assign(cost, cap)
        return
    pick = assign(cost, cap)
    assert pick.shape == (n,)
    assert pick.dtype == np.int64
    assert ((pick >= 0) & (pick < r)).all()
    assert (np.bincount(pick, minlength=r) <= cap).all()
    assert total(cost, pick) == reference_cost(cost, cap)
    assert np.array_equal(assign(cost, cap), pick)  # same input, same answer


def test_balanced_torus_instance() -> None:
    # the nearest-neighbor shape: hop costs, equal capacities ceil(N/R), many ties
    from lnetgen.topology import torus_hops

    dims = (5, 3, 2)
    chips = np.array([(x, y, z) for z in range(2) for y in range(3) for x in range(5)])
    routers = chips[[0, 7, 23]]
    cost = torus_hops(chips, routers, dims)
    cap = np.full(3, 10)
    pick = assign(cost, cap)
    assert np.bincount(pick, minlength=3).tolist() == [10, 10, 10]
    assert total(cost, pick) == reference_cost(cost, cap)


_SCRIPT = """
import numpy as np
from lnetgen.transport import assign
rng = np.random.default_rng(7)
cost = rng.integers(0, 4, size=(300, 6))
print(assign(cost, np.full(6, 50)).tolist())
"""


def test_independent_of_hash_seed() -> None:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        run = subprocess.run(
            [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True
        )
        outs.append(run.stdout)
    assert outs[0] == outs[1]
    assert outs[0].strip()
