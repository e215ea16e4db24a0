"""Review mends of advise: the text of ``advise routers`` prints what the search decided --
per seed whether the moves gain (``SeedGain.gained``, judged with the solver's tolerance) and
why there is no bound (``RouterAdvice.bound_reason``) -- instead of judging again from the
figures and the workload's label."""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_advise import _demo_with_slots, site_plan, with_ost_rate

from lnetgen.advise import advise_stripes
from lnetgen.advise.routers import RouterAdvice, advise_routers
from lnetgen.cli.advise import format_routers
from lnetgen.inventory import load_site
from lnetgen.solve import solve
from lnetgen.throughput import Prediction, WorkloadSpec, parse_inline

WL = "ranks=12,nodes=random,filesystems=scratch"


@pytest.fixture(scope="module")
def rejected(tmp_path_factory: pytest.TempPathFactory) -> RouterAdvice:
    """The demo's move of rtr03 that gains on seeds 0 and 1 only (test_advise_measured)."""
    path = _demo_with_slots(tmp_path_factory.mktemp("rejected"), "[[1, 2, 1], [3, 0, 3]]")
    site = load_site(path)[0]
    return advise_routers(site, solve(site, "projection"), parse_inline(WL), count=1)


def test_each_seed_records_whether_the_search_saw_a_gain(rejected: RouterAdvice) -> None:
    a = rejected
    assert [g.gained for g in a.rejected_by_seed] == [True, True, False, False, False]
    assert a.bound_reason == "torus" and a.bound_mb_s is not None
    assert "gains on 2 of 5 seeds" in "\n".join(format_routers(a))


def test_a_gain_within_the_solver_rounding_is_printed_as_none(rejected: RouterAdvice) -> None:
    """Seed 2's figure a rounding above its figure before: the search counts no gain there
    (``_TOLERANCE``), and so does the text.  Was: the text compared the raw figures and said
    "gains on 3 of 5 seeds" for a move rejected for gaining on 2."""
    a = rejected
    rows = list(a.rejected_by_seed)
    two = rows[2]
    assert two.before_mb_s is not None
    rows[2] = replace(two, after_mb_s=two.before_mb_s * (1 + 1e-12), gained=False)
    text = "\n".join(format_routers(replace(a, rejected_by_seed=tuple(rows))))
    assert "gains on 2 of 5 seeds" in text


def test_the_bound_reason_is_the_advices_not_the_labels(rejected: RouterAdvice) -> None:
    """The text says why there is no bound from ``bound_reason``, not from the label."""
    a = rejected
    text = format_routers(replace(a, bound_reason="background", bound_mb_s=None))
    assert "no bound: other jobs' streams would take what the torus frees" in text[-1]
    assert "background=" not in a.workload


def test_a_background_workload_has_no_bound(tmp_path: Path) -> None:
    path = _demo_with_slots(tmp_path, "[[1, 2, 1], [3, 0, 3]]")
    site = load_site(path)[0]
    wl = "filesystems=scratch,ranks=2,background=10,nodes=nid[00044-00045],osts=4-5"
    a = advise_routers(site, solve(site, "projection"), parse_inline(wl), count=1)
    assert a.bound_reason == "background" and a.bound_mb_s is None
    assert all(g.gained for g in a.by_seed)


@pytest.mark.parametrize("rated", [True, False])
def test_a_jobs_stripe_is_predicted_once(monkeypatch: pytest.MonkeyPatch, rated: bool) -> None:
    """With a job, the width chosen is predicted while choosing it and judged from that
    prediction: no workload is predicted twice (was: the chosen width again), with the OST
    rate (a width chosen) and without (no width chosen, the nearest group judged)."""
    import lnetgen.advise.stripes as stripes

    site, plan = site_plan("demo", "groups")
    if rated:
        site = with_ost_rate(site)
    seen: list[WorkloadSpec] = []
    predict = stripes.predict

    def counted(*args: Any, **kwargs: Any) -> Prediction:
        seen.append(args[2])
        return predict(*args, **kwargs)

    monkeypatch.setattr(stripes, "predict", counted)
    a = advise_stripes(site, plan, "scratch", job=[0], job_label=site.clients.names[0])
    assert a.job_osts and a.advised is not None and a.default is not None
    assert len(seen) == len(set(seen))
    assert bool(a.no_advice) is not rated


def test_moved_routers_look_up_the_rates_entries_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The rates' entries of a prediction do not depend on where the routers sit: a
    ``MovedRouters`` looks them up once, not on every move (was: once per move), and each
    move's prediction is still the moved site's."""
    import lnetgen.throughput.moved as moved_mod
    from lnetgen.throughput import predict

    # the module, not the function the package exports under its name
    predict_mod = importlib.import_module("lnetgen.throughput.predict")

    calls: list[int] = []
    sources = predict_mod._sources

    def counted(*args: Any) -> dict[str, tuple[str, ...]]:
        calls.append(1)
        return sources(*args)

    monkeypatch.setattr(predict_mod, "_sources", counted)
    monkeypatch.setattr(moved_mod, "_sources", counted, raising=False)
    site = load_site(_demo_with_slots(tmp_path, "[[1, 2, 1], [3, 0, 3]]"))[0]
    plan = solve(site, "projection")
    m = moved_mod.MovedRouters(site, plan, parse_inline(WL))
    for moves in ({"rtr03": (1, 2, 1)}, {"rtr02": (3, 0, 3)}, {"rtr01": (1, 2, 1)}):
        got = m.predict(moves)
        monkeypatch.setattr(predict_mod, "_sources", sources)
        assert got == predict(*moved_mod.moved(site, plan, moves), parse_inline(WL))
        monkeypatch.setattr(predict_mod, "_sources", counted)
    assert len(calls) == 1
