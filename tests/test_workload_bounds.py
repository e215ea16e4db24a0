"""Workloads at the documented limits (``lnetgen.throughput.workload``: four million (rank, OST)
pairs, 16 million subflows) predict in bounded memory and time, with the figures of the
straightforward model:

* ranks with the same path are one class of the problem (``throughput.classes``), the same
  figures as one column per rank;
* the problem is laid out a slice of ranks at a time (``throughput.problem``), the same problem
  as laid out at once;
* a filling lays every rank's load out once and takes away what the ranks it freezes added
  (``throughput.fill``), instead of laying the growing ranks' loads out again each round.

Spider with 3,999,999 ranks, a thousand to a node, needed 2.1 GB and ended in a numpy
MemoryError traceback under a 2 GiB address-space limit; a million ranks took 915 s.
"""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
from functools import cache

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import ROOT

from lnetgen.api import load_plan
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.throughput import WorkloadSpec, build_ranks, parse_inline, predict
from lnetgen.throughput.share import Problem, max_min
from lnetgen.throughput.workload import Ranks, with_background
from lnetgen.traffic import index_plan

SITES = ROOT / "sites"


@cache
def site_plan(name: str) -> tuple[Site, Plan]:
    site, plan, _ = load_plan(str(SITES / f"{name}.yaml"), None, None)
    return site, plan


def _random_ranks(rng: random.Random) -> tuple[Ranks, int]:
    """Ranks on few nodes (numbered far beyond the rank count), each over one to three of
    five OSTs at shares of a few kinds, the last ones other jobs' streams."""
    n = rng.randint(1, 60)
    node = [rng.choice([3, 70, 4000, 123456]) for _ in range(n)]
    pr: list[int] = []
    po: list[int] = []
    pw: list[float] = []
    for k in range(n):
        width = rng.randint(1, 3)
        osts = rng.sample(range(5), width)
        w = rng.choice([1.0 / width, 0.5, 1.0])
        for o in osts:
            pr.append(k)
            po.append(o)
            pw.append(w)
    spec = WorkloadSpec()
    ranks = Ranks(
        spec,
        np.asarray(node, dtype=np.int64),
        np.asarray(pr, dtype=np.int64),
        np.asarray(po, dtype=np.int64),
        np.asarray(pw),
        np.arange(5, dtype=np.int64),
        tuple(f"fs-OST{i:04x}" for i in range(5)),
    )
    return ranks, rng.randint(0, n)


def test_rank_classes_are_the_ranks_with_the_same_path() -> None:
    """Against grouping by hand: the same node, the same (OST, share) set, the same side of
    the job; classes numbered by their first rank (a node number above the rank count made
    two nodes one class in a first version)."""
    from lnetgen.throughput.classes import rank_classes

    rng = random.Random(7)
    for _ in range(300):
        ranks, njob = _random_ranks(rng)
        n = len(ranks.node)
        path: dict[int, list[tuple[int, float]]] = {k: [] for k in range(n)}
        for k, o, w in zip(ranks.pair_rank.tolist(), ranks.pair_ost.tolist(),
                           ranks.pair_w.tolist(), strict=True):  # fmt: skip
            path[k].append((o, w))
        first: dict[tuple[object, ...], int] = {}
        of = []
        for k in range(n):
            key = (int(ranks.node[k]), k < njob, tuple(sorted(path[k])))
            of.append(first.setdefault(key, len(first)))
        cl = rank_classes(ranks, njob)
        if len(first) == n:
            assert cl is None
            continue
        assert cl is not None
        assert cl.of.tolist() == of
        assert cl.count.tolist() == np.bincount(of).tolist()
        assert cl.first.tolist() == [of.index(c) for c in range(len(first))]


@pytest.mark.parametrize(
    ("name", "workload", "arbitration"),
    [
        ("spider", "ranks=20000,ranks_per_node=1000", "fair"),
        ("spider", "ranks=20000,ranks_per_node=1000,op=read", "fair"),
        ("spider", "ranks=6000,ranks_per_node=600", "age"),
        ("spider", "ranks=8000,ranks_per_node=400,stripe_count=4,nodes=random", "fair"),
        ("bluewaters", "pattern=shared-file,filesystems=home,files=2,stripe_count=0,"
         "ranks=3000,ranks_per_node=30", "fair"),
        ("bluewaters", "ranks=30000,ranks_per_node=300,filesystems=home,background=20", "fair"),
    ],
)  # fmt: skip
def test_classes_predict_what_every_rank_does(
    name: str, workload: str, arbitration: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thousand ranks to a node over 1,344 OSTs make half as many classes; a shared file's
    ranks on one node, one.  Every figure is the same as with one column per rank."""
    import importlib

    from lnetgen.throughput.classes import rank_classes

    site, plan = site_plan(name)
    spec = parse_inline(workload)
    ranks, njob = with_background(site, spec, build_ranks(site, plan, index_plan(site, plan), spec))
    cl = rank_classes(ranks, njob)
    assert cl is not None and len(cl.first) < 0.9 * len(ranks.node)
    merged = predict(site, plan, spec, arbitration=arbitration)
    predict_mod = importlib.import_module("lnetgen.throughput.predict")
    monkeypatch.setattr(predict_mod, "rank_classes", lambda _r, _n: None)
    assert merged == predict(site, plan, spec, arbitration=arbitration)


@pytest.mark.parametrize(
    ("name", "workload"),
    [
        ("spider", "ranks=20000,ranks_per_node=1000"),
        ("bluewaters", "ranks=6000,ranks_per_node=300,op=read,background=20"),
        ("bluewaters", "pattern=shared-file,filesystems=scratch,files=10,stripe_count=0,"
         "ranks=400,nodes=random"),
    ],
)  # fmt: skip
def test_slices_lay_out_the_problem_laid_out_at_once(
    name: str, workload: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The problem built a few hundred subflows at a time is the problem built at once: the
    same resources, entries (in order) and torus entries, and the same prediction."""
    import importlib

    from lnetgen.throughput.predict import prepare

    problem_mod = importlib.import_module("lnetgen.throughput.problem")
    site, plan = site_plan(name)
    ix = index_plan(site, plan)
    spec = parse_inline(workload)
    whole, njob, _ = prepare(site, plan, ix, spec)
    monkeypatch.setattr(problem_mod, "SLICE", 300)
    sliced, njob2, _ = prepare(site, plan, ix, spec)
    assert njob == njob2 and whole.names == sliced.names and whole.unknown == sliced.unknown
    a, b = whole.problem, sliced.problem
    assert np.array_equal(a.cap, b.cap)
    for field in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(a.use, field), getattr(b.use, field)), field
    assert a.torus is not None and b.torus is not None
    for field in ("rank", "pair", "w"):
        assert np.array_equal(getattr(a.torus, field), getattr(b.torus, field)), field
    assert predict(site, plan, spec) == predict(site, plan, spec, index=ix)


class _Counted(sp.csc_matrix):  # type: ignore[misc]
    """A matrix that counts the products taken with it."""

    products = 0

    def __matmul__(self, other: object) -> object:
        _Counted.products += 1
        return super().__matmul__(other)


def test_a_filling_lays_the_loads_out_once() -> None:
    """Fifty ranks on fifty resources of fifty capacities freeze in fifty rounds; the rates
    are the max-min ones, and the ranks' loads are laid out once for the filling and once
    for the final loads -- not once a round (a million ranks: 915 s)."""
    n = 50
    use = _Counted(sp.csc_matrix(np.eye(n) + np.eye(n, k=1)))
    cap = np.arange(1.0, n + 1) * 10
    _Counted.products = 0
    sh = max_min(Problem(n, use, cap))
    assert _Counted.products <= 2
    # rank k shares resource k with rank k-1 (and k+1): the filling's own answer by hand
    rate = np.zeros(n)
    left = cap.copy()
    frozen = np.zeros(n, dtype=bool)
    level = 0.0
    while not frozen.all():
        growing = np.asarray(
            [int(not frozen[r]) + int(r + 1 < n and not frozen[r + 1]) for r in range(n)]
        )
        room = np.where(growing > 0, left / np.maximum(growing, 1), np.inf)
        step = room.min()
        level += step
        left -= step * growing
        full = room <= step * (1 + 1e-12)
        for r in np.nonzero(full)[0]:
            for k in (r, r + 1):
                if k < n and not frozen[k]:
                    frozen[k] = True
                    rate[k] = level
    assert sh.rate == pytest.approx(rate)


def _cap_2gib() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def test_four_million_ranks_in_two_gib() -> None:
    """The issue's case, at the pairs limit: 3,999,999 ranks, a thousand to a node, under a
    2 GiB address-space limit -- a prediction, not a MemoryError traceback (about 1.1 GB
    resident)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["OPENBLAS_NUM_THREADS"] = "1"  # numpy's BLAS reserves address space per thread
    proc = subprocess.run(
        [sys.executable, "-m", "lnetgen", "analyze", str(SITES / "spider.yaml"),
         "--workload", "ranks=3999999,ranks_per_node=1000"],
        cwd=ROOT, env=env, preexec_fn=_cap_2gib, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-2000:]
    assert "Traceback" not in out and "MemoryError" not in out
    assert "3999999 ranks on 4000 nodes" in proc.stdout
