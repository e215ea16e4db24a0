"""The throughput model: max-min fair sharing by hand-checked cases, the IOR completion time,
workloads, the inventory's rates, and the analyze/compare output that shows them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lnetgen import topology
from lnetgen.cli.analyze import analyze_cmd
from lnetgen.diagnostics import InputError
from lnetgen.inventory import load_site
from lnetgen.rates import parse_rate
from lnetgen.solve import solve
from lnetgen.throughput import build_ranks, parse_inline, predict
from lnetgen.throughput.share import Problem, Torus, completion, max_min
from lnetgen.traffic import index_plan

SITES = Path(__file__).resolve().parent.parent / "sites"
INF = np.inf


def problem(ranks: int, subs: list[tuple[int, float, list[int]]], cap: list[float]) -> Problem:
    """Subflows (rank, fraction of its rate, resources crossed) over resources ``cap``."""
    rows = [r for _, _, res in subs for r in res]
    cols = [k for k, _, res in subs for _ in res]
    vals = [w for _, w, res in subs for _ in res]
    use = sp.csr_matrix((vals, (rows, cols)), shape=(len(cap), ranks))
    use.sum_duplicates()
    return Problem(ranks, use, np.asarray(cap, dtype=np.float64))


def test_max_min_two_ranks_one_capped() -> None:
    """Rank 0 alone on a 30 MB/s resource and with rank 1 on a 100 MB/s one: 30 and 70."""
    p = problem(2, [(0, 1.0, [0, 1]), (1, 1.0, [1])], [30.0, 100.0])
    sh = max_min(p)
    assert sh.rate.tolist() == pytest.approx([30.0, 70.0])
    assert sh.frozen_by.tolist() == [0, 1]
    assert sh.load.tolist() == pytest.approx([30.0, 100.0])


def test_max_min_split_rank_counts_its_fractions() -> None:
    """A rank striped half and half over two OSTs of 40 MB/s gets 80; a rank on the first
    alone then shares it: 40 = r0/2 + r1 with r0/2 = r1 -> 26.67 each side."""
    p = problem(1, [(0, 0.5, [0]), (0, 0.5, [1])], [40.0, 40.0])
    assert max_min(p).rate.tolist() == pytest.approx([80.0])
    p = problem(2, [(0, 0.5, [0]), (0, 0.5, [1]), (1, 1.0, [0])], [40.0, 40.0])
    r = max_min(p).rate
    assert r[0] == pytest.approx(r[1]) and 0.5 * r[0] + r[1] == pytest.approx(40.0)


def test_unknown_capacity_is_unbounded() -> None:
    p = problem(1, [(0, 1.0, [0])], [INF])
    assert max_min(p).rate[0] == INF


def test_completion_reshares_what_finished_ranks_free() -> None:
    """Rank 0 capped at 25 by its own resource, rank 1 shares a 100 MB/s one: 25 and 75;
    rank 1 finishes first, rank 0 keeps 25 (its cap), done at 1/25 s per MB."""
    p = problem(2, [(0, 1.0, [0, 1]), (1, 1.0, [1])], [25.0, 100.0])
    done = completion(p)
    assert done.tolist() == pytest.approx([1 / 25, 1 / 75])
    # two equal ranks on one 100 MB/s resource: IOR's bytes / slowest time = 100
    p = problem(2, [(0, 1.0, [0]), (1, 1.0, [0])], [100.0])
    assert 2 / completion(p).max() == pytest.approx(100.0)


def test_completion_endless_ranks_never_free_their_share() -> None:
    """Rank 1 is another job's endless stream: rank 0 keeps 50 of the shared 100 MB/s until
    it is done (1/50 s per MB), where two finite ranks would both finish at 1/50 as well, but
    a finite rank 1 capped at 10 frees 40 for rank 0 only when it finishes."""
    p = problem(2, [(0, 1.0, [0]), (1, 1.0, [0])], [100.0])
    done = completion(p, endless=np.asarray([False, True]))
    assert done[0] == pytest.approx(1 / 50) and done[1] == INF
    p = problem(2, [(0, 1.0, [0]), (1, 1.0, [0, 1])], [100.0, 10.0])
    # finite: rank 1 (10 MB/s) outlasts rank 0 (90 MB/s); endless, rank 0 is unchanged
    assert completion(p).tolist() == pytest.approx([1 / 90, 1 / 10])
    done = completion(p, endless=np.asarray([False, True]))
    assert done[0] == pytest.approx(1 / 90) and done[1] == INF


def _two_on_a_ring() -> Torus:
    """An 8-chip ring of 30 MB/s links; rank 0 goes from chip 0 to chip 1 (1 hop), rank 1
    from chip 0 to chip 2 (2 hops): both cross the X+ link (0,0,0) -> (1,0,0)."""
    dims = (8, 1, 1)
    src = np.asarray([[0, 0, 0], [0, 0, 0]])
    dst = np.asarray([[1, 0, 0], [2, 0, 0]])
    rank = np.arange(2, dtype=np.int64)
    return Torus.build(dims, "xyz", rank, src, dst, np.ones(2), np.full((*dims, 6), 30.0))


def test_completion_endless_rank_keeps_its_weighted_share() -> None:
    """Age weights 1/2 and 1/4 on one 30 MB/s torus link: 20 and 10.  A finite rank 0
    finishes at 1/20 and frees its share: rank 1 is done at 1/20 + (1/2)/30 = 1/15.
    Endless, rank 0 keeps 20 and rank 1 takes 1/10."""
    tor = _two_on_a_ring()
    p = Problem(2, sp.csr_matrix((0, 2)), np.zeros(0), tor)
    w = np.exp2(-tor.rank_hops(2))
    assert completion(p, weight=w)[1] == pytest.approx(1 / 15)
    assert completion(p, weight=w, endless=np.asarray([True, False]))[1] == pytest.approx(1 / 10)


def test_completion_unbounded_endless_rank_is_quiet() -> None:
    """An endless rank nothing limits (rate inf) does not warn (inf - inf) on the way."""
    import warnings

    p = problem(2, [(0, 1.0, [0]), (1, 1.0, [1])], [100.0, INF])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        done = completion(p, endless=np.asarray([False, True]))
    assert done[0] == pytest.approx(1 / 100)


def test_torus_link_shared_on_a_ring() -> None:
    """Two flows over the same X+ link of a 4-chip ring (10 MB/s each way): 5 each; a third
    flow going the other way is not on it."""
    dims = (4, 1, 1)
    src = np.asarray([[0, 0, 0], [0, 0, 0], [1, 0, 0]])
    dst = np.asarray([[1, 0, 0], [2, 0, 0], [0, 0, 0]])
    rank = np.arange(3, dtype=np.int64)
    tor = Torus.build(dims, "xyz", rank, src, dst, np.ones(3), np.full((*dims, 6), 10.0))
    p = Problem(3, sp.csr_matrix((0, 3)), np.zeros(0), tor)
    sh = max_min(p)
    assert sh.rate.tolist() == pytest.approx([5.0, 5.0, 10.0])
    assert (sh.frozen_by == -2).all()


def test_path_counts_count_paths_not_shares() -> None:
    """On a 4-chip ring: rank 0 splits 1/2 + 1/2 over two paths from chip 0, rank 1 sends
    all of its data from chip 0 to chip 1.  Link 0->1 X+ carries three paths (rank 0's two,
    rank 1's one), whatever fraction each carries; link 1->2 X+ one (rank 0's to chip 2)."""
    dims = (4, 1, 1)
    src = np.asarray([[0, 0, 0], [0, 0, 0], [0, 0, 0]])
    dst = np.asarray([[1, 0, 0], [2, 0, 0], [1, 0, 0]])
    rank = np.asarray([0, 0, 1], dtype=np.int64)
    w = np.asarray([0.5, 0.5, 1.0])
    tor = Torus.build(dims, "xyz", rank, src, dst, w, np.full((*dims, 6), 10.0))
    counts = tor.path_counts()
    assert counts[0, 0, 0].sum() == 3 and counts[1, 0, 0].sum() == 1
    assert counts.sum() == 4  # hops: 1 + 2 + 1
    # the same (rank, pair) given twice is one path
    twice = Torus.build(dims, "xyz", rank[[2, 2]], src[[2, 2]], dst[[2, 2]], np.ones(2), tor.cap)
    assert twice.path_counts().sum() == 1


def test_bottleneck_is_a_link_the_slowest_rank_crosses() -> None:
    """Rank 0 fills the X+ link out of chip 0 alone (100 MB/s); ranks 1-3 share the X+ link
    out of chip 4 (10 each).  Both links are full; the bottleneck is the one the slowest rank
    crosses, holding the three ranks on it (the first full link anywhere, holding every
    torus-bound rank, was named before)."""
    from lnetgen.throughput.predict import _bottleneck, _Built

    dims = (8, 1, 1)
    src = np.asarray([[0, 0, 0], [4, 0, 0], [4, 0, 0], [4, 0, 0]])
    dst = np.asarray([[1, 0, 0], [5, 0, 0], [5, 0, 0], [5, 0, 0]])
    cap = np.full((*dims, 6), 100.0)
    cap[4, 0, 0, 0] = 30.0
    rank = np.arange(4, dtype=np.int64)
    tor = Torus.build(dims, "xyz", rank, src, dst, np.ones(4), cap)
    p = Problem(4, sp.csr_matrix((0, 4)), np.zeros(0), tor)
    sh = max_min(p)
    assert sh.rate.tolist() == pytest.approx([100.0, 10.0, 10.0, 10.0])
    neck = _bottleneck(p, _Built(p, (), frozenset()), sh, 4, 1, True)
    assert (neck.kind, neck.name, neck.ranks) == ("torus link", "(4,0,0)X+", 3)
    assert (neck.load_mb_s, neck.capacity_mb_s) == (30.0, 30.0)


@pytest.mark.parametrize("incidence", [True, False])
def test_bottleneck_is_the_link_that_stopped_the_slowest_rank(
    incidence: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rank 1 crosses the X+ links out of chips 0 (100 MB/s) and 1 (10 MB/s): the second
    stops it at 10; rank 0, on the first only, then fills it (90).  Both links are full at
    the end, but the one that stopped the slowest rank is (1,0,0)X+, holding rank 1 alone;
    the same with the loads summed from the runs (no incidence matrix), whose residues on
    idle links are not links of the rank's path."""
    from lnetgen.throughput import share
    from lnetgen.throughput.predict import _bottleneck, _Built

    if not incidence:
        monkeypatch.setattr(share, "MAX_INCIDENCE", 0)
    dims = (8, 1, 1)
    src = np.asarray([[0, 0, 0], [0, 0, 0]])
    dst = np.asarray([[1, 0, 0], [2, 0, 0]])
    cap = np.full((*dims, 6), 1000.0)
    cap[0, 0, 0, 0] = 100.0
    cap[1, 0, 0, 0] = 10.0
    tor = Torus.build(dims, "xyz", np.arange(2, dtype=np.int64), src, dst, np.ones(2), cap)
    assert (tor.incidence is not None) is incidence
    p = Problem(2, sp.csr_matrix((0, 2)), np.zeros(0), tor)
    sh = max_min(p)
    assert sh.rate.tolist() == pytest.approx([90.0, 10.0])
    neck = _bottleneck(p, _Built(p, (), frozenset()), sh, 2, 1, True)
    assert (neck.name, neck.ranks, neck.load_mb_s) == ("(1,0,0)X+", 1, 10.0)


def test_bottleneck_counts_the_ranks_of_its_own_resource() -> None:
    """Two OSS of 20 and 40 MB/s, two ranks on each: the slowest are held by the first, and
    it holds two ranks, not the four every OSS holds."""
    from lnetgen.throughput.predict import _bottleneck, _Built

    p = problem(4, [(0, 1.0, [0]), (1, 1.0, [0]), (2, 1.0, [1]), (3, 1.0, [1])], [20.0, 40.0])
    sh = max_min(p)
    built = _Built(p, (("oss", "oss1"), ("oss", "oss2")), frozenset())
    neck = _bottleneck(p, built, sh, 4, 0, True)
    assert (neck.kind, neck.name, neck.ranks) == ("oss", "oss1", 2)


coords = st.tuples(st.integers(0, 4), st.integers(0, 3), st.integers(0, 2))


def test_torus_rows_of_one_rank_and_pair_merge() -> None:
    """A rank striped over two OSTs behind the same router: one path, weights summed."""
    dims = (4, 1, 1)
    src = np.asarray([[0, 0, 0], [0, 0, 0]])
    dst = np.asarray([[2, 0, 0], [2, 0, 0]])
    tor = Torus.build(
        dims,
        "xyz",
        np.zeros(2, dtype=np.int64),
        src,
        dst,
        np.full(2, 0.5),
        np.full((*dims, 6), 10.0),
    )
    assert tor.runs.nflows == 1 and tor.w.tolist() == [1.0]
    assert tor.loads(np.asarray([4.0]))[0, 0, 0, 0] == pytest.approx(4.0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(coords, coords), min_size=1, max_size=12),
    st.sampled_from(["xyz", "seastar"]),
    st.integers(0, 2**31),
)
def test_path_sums_is_the_transpose_of_link_loads(
    flows: list[tuple[tuple[int, int, int], tuple[int, int, int]]], mode: str, seed: int
) -> None:
    dims = (5, 4, 3)
    values = np.random.default_rng(seed).random((*dims, 6))
    src = np.asarray([f[0] for f in flows])
    dst = np.asarray([f[1] for f in flows])
    got = topology.path_sums(src, dst, dims, mode, values)
    runs = topology.runs(src, dst, dims, mode)
    assert topology.runs_sums(runs, values) == pytest.approx(got)
    w = values[..., 0].reshape(-1)[: len(flows)] + 0.0
    assert topology.runs_loads(runs, w) == pytest.approx(
        topology.link_loads(src, dst, dims, mode, weights=w)
    )
    for k, (a, b) in enumerate(flows):
        want = sum(
            values[lk.x, lk.y, lk.z, lk.direction] for lk in topology.path_links(a, b, dims, mode)
        )
        assert got[k] == pytest.approx(want)


# ------------------------------------------------------------------------------ workloads


def demo() -> tuple[object, object, object]:
    site = load_site(str(SITES / "demo.yaml"))[0]
    plan = solve(site, "projection")
    return site, plan, index_plan(site, plan)


def test_file_per_process_one_rank_per_ost_in_order() -> None:
    site, plan, ix = demo()
    r = build_ranks(site, plan, ix, parse_inline("nodes=linear"))  # type: ignore[arg-type]
    assert len(r.node) == 48 and r.node.tolist() == list(range(48))
    assert r.pair_ost.tolist() == list(range(48)) and (r.pair_w == 1).all()


def test_shared_file_pools_split_the_osts() -> None:
    site, plan, ix = demo()
    spec = parse_inline("pattern=shared-file,filesystems=scratch,files=2,stripe_count=0,ranks=10")
    r = build_ranks(site, plan, ix, spec)  # type: ignore[arg-type]
    # scratch has 36 OSTs: ranks 0-4 write to the first 18, 5-9 to the last 18, equal parts
    assert len(r.ost_label) == 36 and r.ost_label[0] == "scratch-OST0000"
    for j in range(10):
        osts = r.pair_ost[r.pair_rank == j]
        assert len(osts) == 18 and (osts < 18).all() == (j < 5)
    assert np.bincount(r.pair_rank, weights=r.pair_w) == pytest.approx(np.ones(10))
    # two file systems: ranks in proportion to their OSTs (36 and 12)
    r = build_ranks(site, plan, ix, parse_inline("ranks=8"))  # type: ignore[arg-type]
    assert np.bincount(r.pair_ost < 36).tolist() == [2, 6]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("pattern=striped", "pattern must be one of"),
        ("ranks=0", "ranks 0 is out of range"),
        ("ranks=many", "ranks must be an integer"),
        ("colour=red", "unknown key 'colour'"),
        ("filesystems=nope", "no file system 'nope'"),
        ("ranks=100000", "nodes wanted, the site has 96 clients"),
        ("files=4", "files is for pattern=shared-file"),
        ("pattern=shared-file,files_per_ost=2", "files_per_ost is for pattern=file-per-process"),
        ("ranks=8,files_per_ost=2", "files_per_ost sets the ranks when ranks is not given"),
        ("ost_choice=nearest,stripe_count=2", "ost_choice=nearest is for single-stripe"),
        ("filesystems=home,osts=0-3x", "osts: '0-3x' is not an index or range"),
        ("nodes=nid[1-", "nodes:"),
        # refused before anything of their size is built (they took gigabytes, or a traceback)
        ("nodes=nid[1-99999999]", "names about 99,999,999 nodes"),
        ("nodes=n[1-9999]x[1-9999]", "an inventory holds at most 1,000,000 clients"),
        (
            "ranks=10000000,ranks_per_node=10000000",
            "(rank, OST) pairs: lnetgen models at most 4,000,000",
        ),
        (
            "files_per_ost=10000000,ranks_per_node=10000000",
            "(rank, OST) pairs: lnetgen models at most 4,000,000",
        ),
        ("ranks=10000000,stripe_count=36", "nodes wanted, the site has 96 clients"),
        ("filesystems=home,osts=0-99999,100000-100001", "osts lists more than 100,000 OSTs"),
        # a key given twice inline was silently the last; an empty node set said "has 0"
        ("ranks=4,ranks=8", "ranks is given twice"),
        ("nodes=", "nodes is empty"),
    ],
)
def test_bad_workload_is_an_input_error(text: str, words: str) -> None:
    site, plan, ix = demo()
    with pytest.raises(InputError) as exc:
        build_ranks(site, plan, ix, parse_inline(text))  # type: ignore[arg-type]
    assert words in exc.value.diagnostics[0].message


def test_workload_subflows_are_counted_before_they_are_laid_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The (rank, OST, router) subflows are bounded before the arrays exist: with the bound
    set below the demo's 48 single-stripe ranks, the prediction is an input error."""
    import importlib

    problem_mod = importlib.import_module("lnetgen.throughput.problem")

    site, plan, _ix = demo()
    monkeypatch.setattr(problem_mod, "MAX_SUBFLOWS", 10)
    with pytest.raises(
        InputError, match=r"64 \(rank, OST, router\) subflows under projection: .* at most 10"
    ):
        predict(site, plan, parse_inline("nodes=linear"))  # type: ignore[arg-type]


def test_reads_too_large_are_refused_before_the_writes_are_solved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """analyze predicts writes and reads; a workload whose reads make too many subflows is
    refused before the writes are solved (regression: Blue Waters, 4 million ranks under
    nearest-neighbor, was refused after 40 s of solving its writes).  On the demo's
    round-robin plan 48 ranks make 48 write and 192 read subflows."""
    import importlib

    from lnetgen.analyze.analysis import analyze

    problem_mod = importlib.import_module("lnetgen.throughput.problem")
    predict_mod = importlib.import_module("lnetgen.throughput.predict")
    site = load_site(str(SITES / "demo.yaml"))[0]
    plan = solve(site, "round-robin")
    monkeypatch.setattr(problem_mod, "MAX_SUBFLOWS", 100)
    solved: list[str] = []
    real = predict_mod.solved
    monkeypatch.setattr(
        predict_mod, "solved", lambda *a, **k: solved.append(a[2].op) or real(*a, **k)
    )
    with pytest.raises(InputError, match=r"192 \(rank, OST, router\) subflows under round-robin"):
        analyze(site, plan, throughput=parse_inline("nodes=linear"))  # type: ignore[arg-type]
    assert solved == []
    monkeypatch.setattr(problem_mod, "MAX_SUBFLOWS", 192)
    got = analyze(site, plan, throughput=parse_inline("nodes=linear"))  # type: ignore[arg-type]
    assert solved == ["write", "read"]
    assert [p.op for p in got.throughput] == ["write", "read"]
    assert got.throughput[0].ranks == got.throughput[1].ranks == 48


@pytest.mark.parametrize(
    ("arg", "words"),
    [
        ("", "--workload is empty"),
        ("ranks", "--workload: no file 'ranks' (inline, the values are key=value"),
        (",,", "--workload: no file ',,'"),
    ],
)
def test_workload_argument_that_is_neither_file_nor_inline(arg: str, words: str) -> None:
    from lnetgen.throughput.workload import load_workload

    with pytest.raises(InputError) as exc:
        load_workload(arg)
    assert words in exc.value.diagnostics[0].message


def test_a_file_that_is_not_a_workload_is_not_echoed(tmp_path: Path) -> None:
    """A mapping none of whose keys is a workload's (a password file read as YAML) is refused
    without its keys in the message; a workload with one typo still names the typo."""
    from lnetgen.throughput.workload import load_workload

    f = tmp_path / "w.yaml"
    f.write_text("root:*:20228:0:99999:7:::\nsecret-token-1234: x\n")
    with pytest.raises(InputError) as exc:
        load_workload(str(f))
    text = exc.value.diagnostics[0].message + exc.value.diagnostics[0].path
    assert "not a workload file" in text
    assert "root" not in text and "secret" not in text
    f.write_text("ranks: 4\nrnaks: 5\n")
    with pytest.raises(InputError, match="unknown key 'rnaks'"):
        load_workload(str(f))


def test_workload_file_errors_carry_line_and_column(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text("name: x\npattern: file-per-process\nranks: lots\n")
    res = CliRunner().invoke(analyze_cmd, [str(SITES / "demo.yaml"), "--workload", str(f)])
    assert res.exit_code == 2
    assert f"{f}:3:" in res.output and "E-WORKLOAD" in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        # a list for osts is a list of indices, the same as "0,1"
        ("filesystems: home\nosts: [0, 99]\n", 2, "home has no OST 99"),
        ("filesystems: home\nosts: {a: 1}\n", 2, "osts must be a string or a number, not a"),
        ("filesystems: home\nosts: []\n", 2, "osts lists no OST"),
        ("filesystems: []\n", 1, "filesystems names no file system"),
        ("pattern: true\n", 1, "pattern must be a string or a number, not true/false"),
        ("filesystems: [home, nope]\n", 1, "no file system 'nope'"),
        ("name: x\nfiles: 3\n", 2, "files is for pattern=shared-file"),
        ("ranks: 500\n", 1, "500 nodes wanted, the site has 96 clients"),
        ("nodes: [a, b]\n", 1, "nodes must be a string or a number, not a list"),
        ("name: x\nnodes: nid[0001-0002]\n", 2, "not clients of demo"),
        ("name: x\n\nnodes: placed\nranks_per_node: 2\n", 3, "nodes=placed puts one rank"),
    ],
)
def test_workload_file_errors_found_late_carry_line_and_column(
    text: str, line: int, words: str, tmp_path: Path
) -> None:
    """Errors that only the site reveals (an OST it lacks, too few clients) or that a value's
    shape causes point at the key in the file, as the parser's own errors do."""
    f = tmp_path / "w.yaml"
    f.write_text(text)
    res = CliRunner().invoke(analyze_cmd, [str(SITES / "demo.yaml"), "--workload", str(f)])
    assert res.exit_code == 2, res.output
    assert f"{f}:{line}:" in res.output and "E-WORKLOAD" in res.output, res.output
    assert words in res.output and "Traceback" not in res.output


def test_workload_file_list_of_osts_is_the_inline_list(tmp_path: Path) -> None:
    from lnetgen.throughput.workload import load_workload

    f = tmp_path / "w.yaml"
    f.write_text("filesystems: home\nosts: [0, 2-3]\n")
    assert load_workload(str(f)) == parse_inline("filesystems=home,osts=0,2-3")


@pytest.mark.parametrize(
    ("text", "inline"),
    [("ranks: 010\nseed: 1_0\n", "ranks=010,seed=1_0"), ("osts: [010]\n", "osts=010")],
)
def test_workload_file_numbers_are_read_as_written(tmp_path: Path, text: str, inline: str) -> None:
    """A number in a workload file means what it means inline: YAML 1.1 read ``osts: 010`` as
    OST 8, ``12:30`` as 750 and ``ranks: 010`` as 8 ranks."""
    from lnetgen.throughput.workload import load_workload

    f = tmp_path / "w.yaml"
    f.write_text("filesystems: home\n" + text)
    try:
        want: object = parse_inline("filesystems=home," + inline)
    except InputError as exc:
        want = exc.diagnostics[0].message.removeprefix("--workload: ")
    try:
        got: object = load_workload(str(f))
    except InputError as exc:
        got = exc.diagnostics[0].message
    assert got == want
    for bad in ("osts: 010\n", "osts: 12:30\n"):
        f.write_text("filesystems: home\n" + bad)
        with pytest.raises(InputError, match="is not an index or range"):
            load_workload(str(f))


# -------------------------------------------------------------------------------- rates


def test_parse_rate_units() -> None:
    assert parse_rate("2.6 GB/s") == 2600.0
    assert parse_rate("3020 MB/s") == 3020.0
    assert parse_rate("1.1TB/s") == 1_100_000.0
    with pytest.raises(ValueError):
        parse_rate("3 Gbit/s")


@pytest.mark.parametrize(
    ("rates", "path"),
    [
        ('  ost: {rate: "0 MB/s", source: t}\n', "$.rates.ost"),
        (
            '  torus_link: {x: "0.0 GB/s", y: "1 GB/s", z: "1 GB/s", source: t}\n',
            "$.rates.torus_link",
        ),
    ],
)
def test_a_zero_rate_is_refused_at_its_place(tmp_path: Path, rates: str, path: str) -> None:
    """A rate of zero is not "unknown" (that is a rate left out): it predicted 0.0 GB/s with a
    finish time of 1e300 s.  Now E-RATES at the rate."""
    with pytest.raises(ValueError, match="no rate"):
        parse_rate("0 MB/s")
    f = tmp_path / "r.yaml"
    f.write_text((SITES / "demo.yaml").read_text() + "\nrates:\n" + rates)
    with pytest.raises(InputError) as exc:
        load_site(str(f))
    assert [d.path for d in exc.value.diagnostics if d.code == "E-RATES"] == [path]


def test_inventory_rates_per_direction(tmp_path: Path) -> None:
    text = (SITES / "demo.yaml").read_text()
    f = tmp_path / "r.yaml"
    f.write_text(
        text + '\nrates:\n  torus_link: {x: "1 GB/s", y: "2 GB/s", z: "3 GB/s", "z-": "4 GB/s",'
        ' source: "test"}\n  ost: {rate: "100 MB/s", source: "test"}\n'
    )
    site, diags = load_site(str(f))
    assert site is not None, [d.format() for d in diags]
    assert site.rates.torus_link is not None
    assert [r.mb_s for r in site.rates.torus_link] == [1000, 1000, 2000, 2000, 3000, 4000]
    assert site.rates.ost is not None and site.rates.ost.source == "test"
    f.write_text(text + '\nrates:\n  torus_link: {x: "1 GB/s", y: "2 GB/s", source: "t"}\n')
    with pytest.raises(InputError) as exc:
        load_site(str(f))
    bad = [d for d in exc.value.diagnostics if d.code == "E-RATES-TORUS"]
    assert bad and "z+, z-" in bad[0].message and bad[0].path == "$.rates.torus_link"


def test_no_rates_no_borrowed_figures() -> None:
    """The demo site gives no rates: analyze prints n/a for saturation and bandwidth instead
    of Spider's 3,020 / 180 MB/s (which Blue Waters used to be analysed with)."""
    res = CliRunner().invoke(analyze_cmd, [str(SITES / "demo.yaml"), "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    data = json.loads(res.stdout)
    assert data["settings"]["link_mb_s"] is None and data["settings"]["saturation"] is None
    assert [p["aggregate_mb_s"] for p in data["throughput"]] == [None, None]
    text = CliRunner().invoke(analyze_cmd, [str(SITES / "demo.yaml")]).output
    assert "3020" not in text and "n/a" in text


def test_fat_tree_torus_is_na() -> None:
    """Wolf has no torus: 'n/a', not a load of 0.0."""
    res = CliRunner().invoke(analyze_cmd, [str(SITES / "wolf.yaml")])
    assert "torus: n/a" in res.output
    assert "torus n/a: not a torus" in res.output


def test_prediction_on_the_demo_with_rates(tmp_path: Path) -> None:
    """With only an OST rate, every rank of one-file-per-OST gets exactly that rate and the
    bottleneck is the OST; reads the same."""
    f = tmp_path / "r.yaml"
    f.write_text(
        (SITES / "demo.yaml").read_text() + '\nrates:\n  ost: {rate: "100 MB/s", source: "t"}\n'
    )
    site = load_site(str(f))[0]
    assert site is not None
    plan = solve(site, "projection")
    for op in ("write", "read"):
        p = predict(site, plan, parse_inline(f"op={op},nodes=random"))
        assert p.aggregate_mb_s == pytest.approx(4800.0)
        assert p.bottleneck is not None and p.bottleneck.kind == "ost"
        assert "router" in p.unknown


def test_age_arbitration_halves_per_hop() -> None:
    """Seed 000 s4 on a ring: two ranks share the X+ link (0,0,0) -> (1,0,0) of capacity 30,
    one 1 hop from its router, one 2 hops.  Fair: 15 each.  Age: weights 1/2 and 1/4, so
    20 and 10 while both run; IOR's time is the same (the link is busy either way)."""
    tor = _two_on_a_ring()
    p = Problem(2, sp.csr_matrix((0, 2)), np.zeros(0), tor)
    assert max_min(p).rate.tolist() == pytest.approx([15.0, 15.0])
    weight = np.exp2(-tor.rank_hops(2))
    assert weight.tolist() == [0.5, 0.25]
    assert max_min(p, weight=weight).rate.tolist() == pytest.approx([20.0, 10.0])
    fair, age = completion(p).max(), completion(p, weight=weight).max()
    assert fair == pytest.approx(age) == pytest.approx(2 / 30)


@pytest.mark.parametrize(("oss", "near", "far"), [(20.0, 10.0, 10.0), (100.0, 20.0, 10.0)])
def test_age_arbitration_acts_in_the_torus_only(oss: float, near: float, far: float) -> None:
    """The two ranks of the ring above also share one OSS.  At 20 MB/s the OSS binds before
    the 30 MB/s link fills: the torus does not arbitrate, so the OSS shares equally, 10 each
    (weighting every resource gave 13.3 and 6.7).  At 100 MB/s the link binds: 20 and 10."""
    tor = _two_on_a_ring()
    p = Problem(2, sp.csr_matrix(np.ones((1, 2))), np.asarray([oss]), tor)
    sh = max_min(p, weight=np.exp2(-tor.rank_hops(2)))
    assert sh.rate.tolist() == pytest.approx([near, far])
    assert sh.frozen_by.tolist() == ([0, 0] if oss == 20.0 else [-2, -2])
    assert sh.load.tolist() == pytest.approx([near + far])


def test_age_arbitration_leaves_no_server_capacity_idle() -> None:
    """Rank 0 (1 hop, its own link) and rank 1 (1 hop, a 2 MB/s link) share a 20 MB/s OSS:
    no link is shared, so age changes nothing: 18 and 2, not rank 0 capped at its equal
    share of the OSS (10) with 8 MB/s of it idle."""
    dims = (8, 1, 1)
    cap = np.full((*dims, 6), 1e9)
    cap[7, 0, 0, 0] = 2.0  # X+ out of chip 7 (to chip 0)
    src = np.asarray([[1, 0, 0], [7, 0, 0]])
    dst = np.asarray([[0, 0, 0], [0, 0, 0]])
    tor = Torus.build(dims, "xyz", np.arange(2, dtype=np.int64), src, dst, np.ones(2), cap)
    p = Problem(2, sp.csr_matrix(np.ones((1, 2))), np.asarray([20.0]), tor)
    assert max_min(p, weight=np.exp2(-tor.rank_hops(2))).rate.tolist() == pytest.approx([18, 2])


def test_age_arbitration_lifts_a_torus_share_no_full_link_holds() -> None:
    """Four ranks: V alone on link M (2 MB/s), Z and X on link L (15 MB/s); OSS T (10) serves
    V and W, OSS S (12) serves W and Z.  Fair: V 2, W 6, Z 6, X 9, L full.  The torus filling
    alone gives X a share of 7.5 on L; S then holds Z at 6, L has room, and X must take it up
    to 9 at every weight (it was left at 8 with L one MB/s short of full)."""
    dims = (8, 1, 1)
    cap = np.full((*dims, 6), 1e9)
    cap[2, 0, 0, 0] = 2.0  # M: X+ out of chip 2
    cap[4, 0, 0, 0] = 15.0  # L: X+ out of chip 4
    src = np.asarray([[2, 0, 0], [6, 0, 0], [4, 0, 0], [4, 0, 0]])
    dst = np.asarray([[3, 0, 0], [7, 0, 0], [5, 0, 0], [5, 0, 0]])
    tor = Torus.build(dims, "xyz", np.arange(4, dtype=np.int64), src, dst, np.ones(4), cap)
    use = sp.csr_matrix(np.asarray([[1, 1, 0, 0], [0, 1, 1, 0]], dtype=np.float64))
    p = Problem(4, use, np.asarray([10.0, 12.0]), tor)
    assert max_min(p).rate.tolist() == pytest.approx([2, 6, 6, 9])
    sh = max_min(p, weight=np.full(4, 0.25))
    assert sh.rate.tolist() == pytest.approx([2, 6, 6, 9])
    assert sh.link_load is not None and sh.link_load[4, 0, 0, 0] == pytest.approx(15.0)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1))
@example(5458)  # a share no full link held left link capacity idle
@example(6647)
def test_age_arbitration_with_equal_weights_is_fair(seed: int) -> None:
    """With every weight equal there is nothing to arbitrate by age: the same rates as fair,
    on random ranks over a ring of mixed link capacities and a few shared servers."""
    rng = np.random.default_rng(seed)
    n, m, dims = int(rng.integers(1, 7)), int(rng.integers(1, 4)), (6, 1, 1)
    chips = [np.c_[rng.integers(0, 6, n), np.zeros((n, 2), dtype=np.int64)] for _ in "sd"]
    cap = rng.choice([1.0, 2.0, 5.0, 10.0, 1e9], size=(*dims, 6))
    tor = Torus.build(dims, "xyz", np.arange(n, dtype=np.int64), *chips, np.ones(n), cap)
    use = sp.csr_matrix((rng.random((m, n)) < 0.5).astype(np.float64))
    p = Problem(n, use, rng.choice([3.0, 7.0, 20.0], m), tor)
    fair = max_min(p).rate
    assert max_min(p, weight=np.full(n, 0.25)).rate == pytest.approx(fair)


def test_age_arbitration_is_reported_without_a_prediction(tmp_path: Path) -> None:
    """Every router failed: IOR's figure is 0 (no rank has a route, the run never ends; it
    was None, printed "n/a" as if a rate were missing), nothing for the ranks that run, and
    the prediction still says which arbitration the user asked for (it said "fair")."""
    f = tmp_path / "r.yaml"
    f.write_text(
        (SITES / "demo.yaml").read_text()
        + '\nrates:\n  torus_link: {x: "100 MB/s", y: "100 MB/s", z: "100 MB/s", source: t}\n'
    )
    site = load_site(str(f))[0]
    assert site is not None
    plan = solve(site, "projection")
    spec = parse_inline("nodes=random")
    p = predict(
        site, plan, spec, fail=tuple(f"rtr{i:02d}" for i in range(1, 21)), arbitration="age"
    )
    assert p.aggregate_mb_s == 0.0 and p.unrouted == p.ranks > 0 and p.steady_mb_s is None
    assert p.arbitration == "age"


def test_analyze_arbitration_option_on_spider() -> None:
    """--arbitration age widens the spread of unplaced projection on Spider's widow1 and says
    so in the header; an unknown value is a usage error."""
    args = [str(SITES / "spider.yaml"), "--workload", "filesystems=widow1,nodes=linear", "-q"]
    res = CliRunner().invoke(analyze_cmd, [*args, "--arbitration", "age", "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    age = json.loads(res.stdout)["throughput"][0]
    assert age["arbitration"] == "age"
    assert age["rank_min_mb_s"] < 1.0 and age["slowest_over_fastest"] > 2.0
    bad = CliRunner().invoke(analyze_cmd, [*args, "--arbitration", "oldest"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


SPINE = Path(__file__).resolve().parent / "data" / "spine-links.yaml"
#: Two ranks (cn01, cn02) writing OSTs 0 and 1, both on oss1.
ONE_OSS = "osts=0-1,ranks=2,nodes=linear"


def test_storage_spine_links_replace_the_pooled_uplinks() -> None:
    """By hand, on tests/data/spine-links.yaml (baseline: each rank sends a third through each
    of rtr1, rtr2 on leaf L01 and rtr3 on L02, where oss1 sits): pooled, L01's four 1 GB/s
    uplinks carry 2 x 2/3 of the ranks' rate, so each gets 3 GB/s (6 in all).  OpenSM routes
    oss1's LID from L01 through one uplink: both routers' crossings share that 1 GB/s link,
    each rank gets 750 MB/s (1.5 GB/s in all).  The routes here are given by hand."""
    from lnetgen.throughput.fabric import FabricRoutes

    site = load_site(str(SPINE))[0]
    assert site is not None
    plan = solve(site, "baseline")
    spec = parse_inline(ONE_OSS)
    pooled = predict(site, plan, spec)
    assert pooled.aggregate_mb_s == pytest.approx(6000.0)
    assert pooled.bottleneck is not None and pooled.bottleneck.kind == "leaf uplinks"
    up = ("core/L01 port 5", "core/S01 port 2")
    paths = {
        ("rtr1", "oss1"): ("rtr1 port", *up, "core/L02 port 1"),
        ("rtr2", "oss1"): ("rtr2 port", *up, "core/L02 port 1"),
        ("rtr3", "oss1"): ("rtr3 port", "core/L02 port 1"),  # same leaf: no spine link
    }
    routed = predict(site, plan, spec, storage_routes=FabricRoutes("storage-ib", "none", paths))
    assert routed.aggregate_mb_s == pytest.approx(1500.0)
    assert routed.bottleneck is not None
    assert (routed.bottleneck.kind, routed.bottleneck.name) == ("spine link", "core/L01 port 5")
    # a pair without a route (rtr2's) keeps the pooled uplinks; rtr1's thirds alone fill the
    # 1 GB/s link when each rank runs at 1.5 GB/s
    partial = {k: v for k, v in paths.items() if k[0] != "rtr2"}
    mixed = predict(site, plan, spec, storage_routes=FabricRoutes("storage-ib", "none", partial))
    assert mixed.aggregate_mb_s == pytest.approx(3000.0)


def test_block_test_pairs_and_rates_by_hand(tmp_path: Path) -> None:
    """Seed 000's block test on tests/data/spine-links.yaml with oss2 moved to L01: on-leaf
    rtr1 -> oss2 and rtr3 -> oss1 run at their 10 GB/s ports (20 in all); across, rtr1 -> oss1
    and rtr3 -> oss2 each get a module's four pooled 1 GB/s uplinks (8 in all), or the one
    spine link a route takes (2 in all)."""
    from lnetgen.throughput.block import block_pairs, block_test
    from lnetgen.throughput.fabric import FabricRoutes

    f = tmp_path / "s.yaml"
    f.write_text(SPINE.read_text().replace("leaf: L02, port: 2}", "leaf: L01, port: 3}"))
    site = load_site(str(f))[0]
    assert site is not None
    assert block_pairs(site, "lscratch", 0) == [("rtr1", "oss2"), ("rtr3", "oss1")]
    assert block_pairs(site, "lscratch", 1) == [("rtr1", "oss1"), ("rtr3", "oss2")]
    assert block_test(site, "lscratch", 0).aggregate_mb_s == pytest.approx(20000.0)
    pooled = block_test(site, "lscratch", 1)
    assert pooled.aggregate_mb_s == pytest.approx(8000.0)
    assert pooled.bottleneck == ("leaf uplinks", "core/L01")
    paths = {
        ("rtr1", "oss1"): ("rtr1 port", "core/L01 port 5", "core/S01 port 2", "core/L02 port 1"),
        ("rtr3", "oss2"): ("rtr3 port", "core/L02 port 6", "core/S02 port 1", "core/L01 port 3"),
    }
    routed = block_test(site, "lscratch", 1, FabricRoutes("storage-ib", "none", paths))
    assert routed.aggregate_mb_s == pytest.approx(2000.0)
    assert routed.bottleneck == ("spine link", "core/L01 port 5")
    with pytest.raises(InputError):
        block_pairs(site, "nope", 0)


def test_background_shares_without_counting() -> None:
    """On tests/data/spine-links.yaml (baseline), the job is one rank on cn01 writing OST 0
    (oss1): alone, L01's pooled 4 GB/s uplinks carry 2/3 of it, 6 GB/s.  background=100 adds
    the three other clients, each an endless stream to the job's OSTs (OST 0 only here): four
    streams put 4 x 2/3 of their rate on the uplinks, 1.5 GB/s each; the job still reports one
    rank on one node, and finishes at 1.5 GB/s."""
    site = load_site(str(SPINE))[0]
    assert site is not None
    plan = solve(site, "baseline")
    alone = predict(site, plan, parse_inline("osts=0,ranks=1"))
    assert alone.aggregate_mb_s == pytest.approx(6000.0) and alone.background_nodes == 0
    busy = predict(site, plan, parse_inline("osts=0,ranks=1,background=100"))
    assert busy.aggregate_mb_s == pytest.approx(1500.0)
    assert (busy.ranks, busy.nodes, busy.background_nodes) == (1, 1, 3)
    assert busy.bottleneck is not None and busy.bottleneck.ranks == 1
    assert busy.bound_mb_s == alone.bound_mb_s  # what the job's own path can carry


def test_background_nodes_do_not_count_in_the_capacity(tmp_path: Path) -> None:
    """With a 20 GB/s injection rate, the job's one node can inject 20 GB/s; the three busy
    nodes' injection is theirs, not the job's capacity (80 GB/s before)."""
    text = SPINE.read_text()
    rates = "rates:\n"
    site, _ = _with(text, rates, rates + '  injection: {rate: "20 GB/s", source: "t"}\n',
                    tmp_path)  # fmt: skip
    plan = solve(site, "baseline")  # type: ignore[arg-type]
    busy = predict(site, plan, parse_inline("osts=0,ranks=1,background=100"))  # type: ignore[arg-type]
    assert busy.bound_mb_s["injection"] == pytest.approx(20000.0)
    assert "background=100%" in busy.workload
    half = predict(site, plan, parse_inline("osts=0,ranks=1,background=50"))  # 1 of 3 others
    assert half.background_nodes == 1 and half.aggregate_mb_s == pytest.approx(3000.0)


def _two_client_nets(tmp_path: Path) -> Path:
    """The spine-links site with cn03-04 on a second client net whose only router, rtr3, sits
    on a TOR without rates; rtr2 moves to L02; only the director gives ib_link."""
    t = SPINE.read_text()
    edits = [
        ("  - {name: o2ib100, interface: ib0}\n",
         "  - {name: o2ib100, interface: ib0}\n  - {name: o2ib101, interface: ib0}\n"),
        ('nodes: "cn[01-04]", net: o2ib100,', 'nodes: "cn[01-02]", net: o2ib100,'),
        ('guid_base: "0x0011750c00000000"}',
         'guid_base: "0x0011750c00000000"}\n  - {name: other, nodes: "cn[03-04]", net: o2ib101, '
         'nid: {ip: 10.101.0.1}, guid_base: "0x0011750c00000100"}'),
        ('  ib_link: {rate: "10 GB/s", source: "test: invented"}\n', ""),
        ("        kind: director\n",
         '        kind: director\n        rates: {ib_link: {rate: "10 GB/s", source: "t"}}\n'),
        ("uplinks: 4}\n", 'uplinks: 4}\n      - {name: tor2, kind: tor, ports: 4, uplinks: 0}\n'),
        ("    attach: {switch: core, leaf: L01, port: 2}\n",
         "    attach: {switch: core, leaf: L02, port: 5}\n"),
        ('nid: "10.100.1.3@o2ib100"', 'nid: "10.101.1.3@o2ib101"'),
        ("    attach: {switch: core, leaf: L02, port: 4}\n",
         "    attach: {switch: tor2, port: 1}\n"),
    ]  # fmt: skip
    for old, new in edits:
        assert old in t, old
        t = t.replace(old, new)
    f = tmp_path / "two.yaml"
    f.write_text(t.replace("ports: 4, uplinks: 4}", "ports: 5, uplinks: 4}"))
    return f


def test_background_does_not_leak_into_unknown_rates(tmp_path: Path) -> None:
    """The busy nodes cn03-04 go through rtr3, whose port has no rate; the job's cn01 goes
    through rtr1 and rtr2, whose ports have the director's: 'router port' is not a rate the
    job's figures miss."""
    site = load_site(str(_two_client_nets(tmp_path)))[0]
    assert site is not None
    plan = solve(site, "baseline")
    alone = predict(site, plan, parse_inline("osts=0,ranks=1"))
    busy = predict(site, plan, parse_inline("osts=0,ranks=1,background=100"))
    assert busy.background_nodes == 3
    assert "router port" not in busy.unknown and busy.unknown == alone.unknown


@pytest.mark.parametrize("text", ["background=101", "background=-5", "background=some"])
def test_background_is_a_percentage(text: str) -> None:
    with pytest.raises(InputError) as exc:
        parse_inline(text)
    assert "background" in exc.value.diagnostics[0].message


def _with(text: str, old: str, new: str, tmp_path: Path) -> object:
    assert old in text
    f = tmp_path / "s.yaml"
    f.write_text(text.replace(old, new))
    site, diags = load_site(str(f))
    assert site is not None, [d.message for d in diags]
    return site, diags


def test_a_switch_carries_its_own_rates(tmp_path: Path) -> None:
    """fabrics[].switches[].rates over the site's: on the spine-links site (two ranks writing to
    oss1 through baseline's routers) the director's own 1.5 GB/s uplinks give L01 6 GB/s,
    which 2 x 2/3 of the ranks' rate fills at 4.5 GB/s each (9 in all); its own 5 GB/s ports
    make oss1's port bind at 2.5 GB/s each (5 in all).  A rate the site leaves out but the
    switch gives is not listed as unknown."""
    text = SPINE.read_text()
    kind = "        kind: director\n"
    spec = parse_inline(ONE_OSS)
    site, _ = _with(text, kind, kind + '        rates: {uplink: {rate: "1.5 GB/s", source: '
                    '"test"}}\n', tmp_path)  # fmt: skip
    p = predict(site, solve(site, "baseline"), spec)  # type: ignore[arg-type]
    assert p.aggregate_mb_s == pytest.approx(9000.0)
    assert p.bottleneck is not None and p.bottleneck.kind == "leaf uplinks"
    site, _ = _with(text, kind, kind + '        rates: {ib_link: {rate: "5 GB/s", source: '
                    '"test"}}\n', tmp_path)  # fmt: skip
    p = predict(site, solve(site, "baseline"), spec)  # type: ignore[arg-type]
    assert p.aggregate_mb_s == pytest.approx(5000.0)
    assert p.bottleneck is not None and p.bottleneck.kind == "server port"
    # the site gives no uplink rate, the switch does: the same 6 GB/s, nothing unknown there
    no_site = text.replace(
        '  uplink: {rate: "1 GB/s", source: "test: invented, slow on purpose"}\n', ""
    )
    site, _ = _with(no_site, kind, kind + '        rates: {uplink: {rate: "1 GB/s", source: '
                    '"test"}}\n', tmp_path)  # fmt: skip
    p = predict(site, solve(site, "baseline"), spec)  # type: ignore[arg-type]
    assert p.aggregate_mb_s == pytest.approx(6000.0) and "leaf uplinks" not in p.unknown
    site, _ = _with(no_site, kind, kind, tmp_path)  # neither gives it
    p = predict(site, solve(site, "baseline"), spec)  # type: ignore[arg-type]
    assert "leaf uplinks" in p.unknown


def test_switch_rates_on_a_compute_fabric_are_ignored(tmp_path: Path) -> None:
    text = SPINE.read_text()
    tor = '{name: comp-tor1, kind: tor, ports: 36, uplinks: 0, guid: "0x0002c90100000002"'
    site, diags = _with(text, tor, tor + ', rates: {uplink: {rate: "1 GB/s", source: "t"}}',
                        tmp_path)  # fmt: skip
    _, plain = _with(text, tor, tor, tmp_path)  # the warnings the site has without the rate
    before = {d.code for d in plain if d.severity == "warning"}
    codes = [d.code for d in diags if d.severity == "warning"]
    assert [c for c in codes if c not in before] == ["W-RATES-SWITCH"]
    assert site.switch("comp-tor1").rates.uplink is None  # type: ignore[attr-defined]
    bad = tmp_path / "b.yaml"
    bad.write_text(text.replace(tor, tor + ', rates: {oss: {rate: "1 GB/s", source: "t"}}'))
    with pytest.raises(InputError) as exc:
        load_site(str(bad))
    [d] = exc.value.diagnostics
    assert d.code == "E-SCHEMA-KEY" and "rates.oss" in d.path and "ib_link, uplink" in str(d.hint)


def test_opensm_routes_the_storage_fabric() -> None:
    """The same site with OpenSM's own tables (ibsim): ftree routes every route to oss1 from
    L01 through one spine, as the hand-made routes above say."""
    from lnetgen.fabric.simulate import missing_tools

    if missing_tools():
        pytest.skip(f"needs {', '.join(missing_tools())} (.ci/run installs them)")
    args = [str(SPINE), "-s", "baseline", "--workload", ONE_OSS, "-q", "--format", "json"]
    res = CliRunner().invoke(analyze_cmd, args)
    assert json.loads(res.stdout)["throughput"][0]["aggregate_mb_s"] == pytest.approx(6000.0)
    res = CliRunner().invoke(analyze_cmd, [*args, "--opensm", "none"])
    assert res.exit_code in (0, 1), res.output
    write, read = json.loads(res.stdout)["throughput"]
    assert write["aggregate_mb_s"] == pytest.approx(1500.0)
    assert write["bottleneck"]["kind"] == "spine link"
    assert write["bottleneck"]["name"].startswith("core/L01 port ")
    # reads: oss1 sends to two router LIDs on L01, which ftree puts on two spines: 2 x 1 GB/s
    # carry 2 x 2/3 of the ranks' rate, 1.5 GB/s each, 3 GB/s in all
    assert read["aggregate_mb_s"] == pytest.approx(3000.0)


def test_opensm_routes_share_the_spine_port_on_wolf() -> None:
    """Seed 002 by hand: without settings OpenSM sends every route of a leaf to the IO nodes
    (all on port 18) through one spine port, so the 64 contiguous nodes (wolf001-064, on the
    first four line cards) share four 4 GB/s uplinks; with the recorded fix they do not."""
    from lnetgen.fabric.simulate import missing_tools

    if missing_tools():
        pytest.skip(f"needs {', '.join(missing_tools())} (.ci/run installs them)")
    args = [str(SITES / "wolf.yaml"), "--workload", "ranks=64,stripe_count=96", "-q"]
    res = CliRunner().invoke(analyze_cmd, [*args, "--opensm", "none", "--format", "json"])
    before = json.loads(res.stdout)["throughput"][0]
    assert before["bottleneck"]["kind"] == "fabric link"
    assert before["bottleneck"]["name"].endswith("port 36")  # port 18's spine, as seed 002 saw
    res = CliRunner().invoke(analyze_cmd, [*args, "--opensm", "recorded", "--format", "json"])
    after = json.loads(res.stdout)["throughput"][0]
    assert after["bottleneck"]["kind"] == "router"
    assert after["aggregate_mb_s"] == pytest.approx(21 * 2300)  # 21 OSS-side routers x 2.3 GB/s
    assert before["aggregate_mb_s"] < 0.4 * after["aggregate_mb_s"]


def test_compare_and_report_take_opensm(tmp_path: Path) -> None:
    """compare and report predict with the same --opensm as analyze.  By hand on the
    spine-links site, baseline, the default workload (one rank per OST, OSTs 0-1 on oss1,
    2-3 on oss2): pooled, L01's 4 GB/s of uplinks carry 4 x 2/3 of the rank rate, 1.5 GB/s
    each, 6 in all; OpenSM routes oss1 and oss2 from L01 over one 1 GB/s link each, which
    2 x 2/3 of the rank rate fills at 750 MB/s, 3 GB/s in all."""
    from lnetgen.cli.compare import compare_cmd
    from lnetgen.cli.report import command as report_cmd
    from lnetgen.fabric.simulate import missing_tools

    if missing_tools():
        pytest.skip(f"needs {', '.join(missing_tools())} (.ci/run installs them)")
    args = [str(SPINE), "--strategies", "baseline", "-q", "--format", "json"]
    pooled = json.loads(CliRunner().invoke(compare_cmd, args).stdout)[0]
    assert pooled["write_mb_s"] == pytest.approx(6000.0) and pooled["opensm"] == ""
    res = CliRunner().invoke(compare_cmd, [*args, "--opensm", "none"])
    assert res.exit_code == 0, res.output
    [row] = json.loads(res.stdout)
    assert row["write_mb_s"] == pytest.approx(3000.0)
    assert row["opensm"] == "compute-ib, storage-ib (none settings)"
    out = tmp_path / "r.html"
    res = CliRunner().invoke(
        report_cmd, [str(SPINE), "-s", "baseline", "-q", "--opensm", "none", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    html = out.read_text()
    assert "3.0 / 3.0 GB/s" in html and "simulated routes of compute-ib, storage-ib" in html


def test_nearest_osts_are_distinct_and_nearest() -> None:
    """ost_choice=nearest: every rank gets a distinct OST, and no rank's OST is farther (hops
    to its gateways) than one left free."""
    from lnetgen.place.hops import net_hops

    site, plan, ix = demo()
    r = build_ranks(site, plan, ix, parse_inline("filesystems=scratch,ranks=8,ost_choice=nearest"))  # type: ignore[arg-type]
    assert len(set(r.pair_ost.tolist())) == 8
    hops = net_hops(ix)  # type: ignore[arg-type]
    nets = ix.server_net[r.ost_server]  # type: ignore[attr-defined]
    used = set(r.pair_ost.tolist())
    for j, (node, ost) in enumerate(zip(r.node.tolist(), r.pair_ost.tolist(), strict=True)):
        taken_before = set(r.pair_ost.tolist()[:j])
        free = [o for o in range(len(r.ost_server)) if o not in taken_before]
        assert hops[node, nets[ost]] <= min(hops[node, nets[o]] for o in free)
    assert used
    with pytest.raises(InputError):
        build_ranks(site, plan, ix, parse_inline("ost_choice=nearest,stripe_count=2"))  # type: ignore[arg-type]


def test_workload_none_predicts_nothing() -> None:
    """--workload none: analyze prints no prediction, compare n/a (and runs faster); advise
    routers, which judges by a workload, refuses it."""
    from lnetgen.cli.advise import routers_cmd
    from lnetgen.cli.compare import compare_cmd

    demo = str(SITES / "demo.yaml")
    r = CliRunner().invoke(analyze_cmd, [demo, "--workload", "none"])
    assert "predicted bandwidth" not in r.output
    r = CliRunner().invoke(compare_cmd, [demo, "--workload", "none", "--format", "json"])
    assert all(row["write_mb_s"] is None for row in json.loads(r.stdout))
    r = CliRunner().invoke(routers_cmd, [demo, "--workload", "none"])
    assert r.exit_code == 2 and "not none" in r.output and "Traceback" not in r.output


@settings(max_examples=40, deadline=None)
@given(
    st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6)),
    st.sampled_from(topology.ROUTING_MODES),
    st.integers(0, 2**32 - 1),
)
def test_torus_incidence_matches_the_runs(
    dims: tuple[int, int, int], routing: str, seed: int
) -> None:
    """The sparse link x pair matrix lays out the same loads, and finds the same ranks on a
    set of links, as the runs it replaces when it fits in memory."""
    rng = np.random.default_rng(seed)
    n, nranks = 40, 12
    src = np.stack([rng.integers(0, d, n) for d in dims], axis=1)
    dst = np.stack([rng.integers(0, d, n) for d in dims], axis=1)
    t = Torus.build(
        dims, routing, rng.integers(0, nranks, n), src, dst, rng.random(n), np.ones((*dims, 6))
    )
    assert t.incidence is not None
    rate = rng.random(nranks)
    per_pair = np.bincount(t.pair, weights=t.w * rate[t.rank], minlength=t.runs.nflows)
    assert np.allclose(t.loads(rate), topology.runs_loads(t.runs, per_pair), atol=1e-12)
    links = (rng.random((*dims, 6)) > 0.8).astype(np.float64)
    hit = topology.runs_sums(t.runs, links) > 0
    want = np.zeros(nranks, dtype=bool)
    want[t.rank[hit[t.pair]]] = True
    assert (t.ranks_on(links, nranks) == want).all()


def test_prediction_is_the_same_without_the_incidence_matrix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over the memory bound the loads come from the runs: the same rates, the same bottleneck
    named (saturated links tie up to float noise; the first of them is named)."""
    import lnetgen.throughput.share as share

    site = load_site(str(Path(__file__).resolve().parent.parent / "sites" / "spider.yaml"))[0]
    plan = solve(site, "projection")
    # seed 000's unplaced projection: bound by a torus link
    spec = parse_inline("filesystems=widow1,nodes=linear")
    a = predict(site, plan, spec)
    assert a.bottleneck is not None and a.bottleneck.kind == "torus link"
    monkeypatch.setattr(share, "MAX_INCIDENCE", 0)
    b = predict(site, plan, spec)
    assert a.aggregate_mb_s == b.aggregate_mb_s and a.steady_mb_s == b.steady_mb_s
    assert a.bottleneck == b.bottleneck


NO_OSTS = SITES.parent / "tests" / "cases" / "valid" / "tcp-clients" / "site.yaml"


@pytest.mark.parametrize("command", ["analyze", "compare", "report"])
def test_default_workload_on_a_site_without_osts(command: str, tmp_path: Path) -> None:
    """A valid site whose servers list no OSTs: the default prediction has nothing to run on,
    so nothing is predicted and the command runs (it exited 2 on an option never given); a
    workload the user gives is still an input error."""
    from lnetgen.cli import main

    out = ["--out", str(tmp_path / "r")] if command == "report" else []
    res = CliRunner().invoke(main, [command, str(NO_OSTS), *out])
    assert res.exit_code in (0, 1), res.output
    assert "E-WORKLOAD" not in res.output
    out = ["--out", str(tmp_path / "r2")] if command == "report" else []
    res = CliRunner().invoke(main, [command, str(NO_OSTS), "--workload", "ranks=2", *out])
    assert res.exit_code == 2 and "no OSTs" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("command", ["analyze", "compare", "report"])
def test_located_workload_error_exits_2_in_every_command(command: str, tmp_path: Path) -> None:
    """An OST the site lacks, found while predicting: the workload file's line and column,
    exit 2 (an input error of the command line's), the same in the three commands."""
    from lnetgen.cli import main

    f = tmp_path / "w.yaml"
    f.write_text("filesystems: home\nosts: [0, 99]\n")
    out = ["--out", str(tmp_path / "r")] if command == "report" else []
    res = CliRunner().invoke(main, [command, str(SITES / "demo.yaml"), "--workload", str(f), *out])
    assert res.exit_code == 2, res.output
    assert f"{f}:2:" in res.output and "home has no OST 99" in res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "r").exists()


def test_workload_file_error_about_no_key_it_gives_names_the_file(tmp_path: Path) -> None:
    """A site without OSTs and a file that names no file system: the error is about the
    file (its document), not about an inline --workload the user never typed."""
    f = tmp_path / "w.yaml"
    f.write_text("ranks: 2\n")
    res = CliRunner().invoke(analyze_cmd, [str(NO_OSTS), "--workload", str(f)])
    assert res.exit_code == 2, res.output
    assert f"{f}:1:1: error[E-WORKLOAD] $: the chosen file systems have no OSTs" in res.output
