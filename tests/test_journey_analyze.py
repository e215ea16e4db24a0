"""Review findings on analyze, compare and report: ranks left without a route by a failure
are counted (and IOR's figure is 0, not the routed ranks' bandwidth nor "n/a"); a failed leaf
module or switch takes the servers cabled to it down with its routers; the report's header
and section numbers on a site without a torus."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from lnetgen.analyze import analyze, worst_failures
from lnetgen.cli import main
from lnetgen.cli.compare import Rates, format_compare
from lnetgen.inventory import load_site
from lnetgen.solve import solve
from lnetgen.throughput import parse_inline, predict
from lnetgen.traffic import index_plan

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "sites" / "demo.yaml"
RATES = """
rates:
  ost: {rate: "500 MB/s", source: t}
  oss: {rate: "2 GB/s", source: t}
  router: {rate: "2 GB/s", source: t}
  ib_link: {rate: "4 GB/s", source: t}
  injection: {rate: "6 GB/s", source: t}
"""


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo site with rates, so that every prediction has a figure."""
    f = tmp_path_factory.mktemp("rated") / "demo.yaml"
    f.write_text(DEMO.read_text() + RATES)
    return f


def _site(path: Path):  # type: ignore[no-untyped-def]
    site = load_site(str(path))[0]
    assert site is not None
    return site


# ---------------------------------------------------------------- 1. ranks without a route


def test_prediction_counts_unrouted_ranks_and_ior_gets_zero(rated: Path) -> None:
    """projection with rtr02 down: the ranks of o2ib101's OSTs have no gateway left.  IOR's
    figure was the routed ranks' (positive, as if the run completed) with ``ranks`` counting
    them all; now it is 0, ``unrouted`` says how many hang, and the routed ranks' figures
    stay, labelled as theirs."""
    site = _site(rated)
    plan = solve(site, "projection")
    spec = parse_inline("nodes=random")
    ok = predict(site, plan, spec)
    assert ok.unrouted == 0 and ok.aggregate_mb_s and ok.aggregate_mb_s > 0
    p = predict(site, plan, spec, fail=("rtr02",))
    assert 0 < p.unrouted < p.ranks
    assert p.aggregate_mb_s == 0.0
    assert p.steady_mb_s is not None and p.steady_mb_s > 0
    everything = tuple(r.name for r in site.routers)
    none = predict(site, plan, spec, fail=everything)
    assert none.unrouted == none.ranks and none.aggregate_mb_s == 0.0
    assert none.steady_mb_s is None


def test_analyze_text_and_json_say_no_route(rated: Path) -> None:
    args = ["analyze", str(rated), "-s", "projection", "--workload", "nodes=random"]
    res = CliRunner().invoke(main, [*args, "--fail", "rtr02"])
    assert res.exit_code == 1, res.output
    m = re.search(
        r"writes: 0 GB/s as IOR reports it: no route for (\d+) of (\d+) ranks", res.output
    )
    assert m is not None, res.output
    routed = int(m.group(2)) - int(m.group(1))
    assert f"the {routed} ranks with a route, running without the others: " in res.output
    assert "all ranks running" not in res.output
    res = CliRunner().invoke(main, [*args, "--fail", "rtr02", "--format", "json"])
    doc = json.loads(res.stdout)
    w = doc["throughput"][0]
    assert w["unrouted"] == int(m.group(1)) and w["aggregate_mb_s"] == 0.0
    # everything lost: 0 with the count, never "n/a" (which means a missing rate)
    res = CliRunner().invoke(main, [*args, "--fail", "core1", "--fail", "core2"])
    line = next(ln for ln in res.output.splitlines() if "as IOR reports it" in ln)
    assert "n/a" not in line and "writes: 0 GB/s as IOR reports it: no route for" in line


def test_compare_and_report_show_unrouted(
    rated: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """compare and report predict with every router up; a plan that leaves ranks without a
    route (here: analyze called with rtr02 down) shows 0 and the count, not the routed
    ranks' bandwidth."""
    import lnetgen.analyze.comparison as comparison
    import lnetgen.report.solved as solved

    down = functools.partial(analyze, fail=("rtr02",))
    monkeypatch.setattr(comparison, "analyze", down)
    monkeypatch.setattr(solved, "analyze", down)
    site = _site(rated)
    rows = comparison.compare(
        site, ["projection"], workload=parse_inline("nodes=random"), uniform_torus=False
    )
    assert rows[0].write_unrouted > 0 and rows[0].write_mb_s == 0.0
    text = "\n".join(format_compare(rows, Rates()))
    assert f"0 (no route: {rows[0].write_unrouted} ranks)" in text
    assert Rates().row(rows[0])["write_bound"] is False
    from lnetgen.report import build_report, render_html

    html = render_html(build_report(site, ["projection"], workload=parse_inline("nodes=random")))
    assert f"0 (no route: {rows[0].write_unrouted} ranks)" in html
    assert "never completes" in html


# ---------------------------------------------------------------- 2. a leaf fails physically


def test_leaf_failure_takes_its_servers() -> None:
    """groups on the demo: core1/L01 holds rtr01-04 and oss01-03.  With the leaf down its
    servers are cut off: their 12 OSTs' flows are lost (0 before, the backup routers
    carrying them over the spine into a dead line card)."""
    res = CliRunner().invoke(main, ["analyze", str(DEMO), "-s", "groups", "--fail", "core1/L01"])
    assert res.exit_code == 1, res.output
    assert "unserved: 12.0 write flows and 12.0 read flows have no live route" in res.output
    for s in ("oss01", "oss02", "oss03"):
        assert f"lost     server {s} (oss, 4 OSTs): cut off; targets lost" in res.output
    assert "12 lost with their servers" in res.output
    # the routers of that leaf alone: a router failure, as before
    res = CliRunner().invoke(main, ["analyze", str(DEMO), "-s", "groups", "--fail", "rtr[01-04]"])
    assert res.exit_code == 0, res.output
    assert "server oss01" not in res.output and "unserved" not in res.output


def test_worst_leaf_failure_counts_its_servers() -> None:
    """The leaf's servers count as lost with their servers (``down``), apart from the flows a
    layout leaves without a route (``lost``, compare's column): groups' backups lose nothing
    to a failure, and a leaf failure no longer reads as nothing lost."""
    site = _site(DEMO)
    got = {w.scope: w for w in worst_failures(index_plan(site, solve(site, "groups")))}
    assert got["router"].lost == 0 and got["router"].most_lost == 0 and got["router"].down == 0
    assert got["leaf"].down == 12 and got["leaf"].lost == 0
    res = CliRunner().invoke(main, ["analyze", str(DEMO), "-s", "groups"])
    assert "worst single leaf failure (core1/L01)" in res.output
    assert "12 lost with their servers" in res.output
    res = CliRunner().invoke(main, ["compare", str(DEMO), "--strategies", "groups,projection"])
    cells = {
        ln.split()[0]: next(w for w in ln.split() if "x/" in w)
        for ln in res.output.splitlines()[1:3]
    }
    assert cells == {"groups": "1.33x/0", "projection": "1.00x/4"}


def test_leaf_failure_prediction_strands_the_leafs_ranks(rated: Path) -> None:
    site = _site(rated)
    plan = solve(site, "groups")
    p = predict(site, plan, parse_inline("nodes=random"), fail=("core1/L01",))
    assert p.unrouted > 0 and p.aggregate_mb_s == 0.0


def test_failover_partner_up_carries_the_targets_down_with_the_leaf_is_lost() -> None:
    """The inventory puts a failover partner on its primary's leaf module (E-FAILOVER), so a
    leaf failure takes both and their targets are lost.  Should a partner be up (the model
    built without that rule: here by hand), it carries the targets instead."""
    site = _site(DEMO)
    oss = {s.name: s for s in site.servers}
    assert oss["oss01"].attach.module == oss["oss02"].attach.module
    paired = dataclasses.replace(
        site,
        servers=tuple(
            dataclasses.replace(s, failover={"oss01": "oss02", "oss02": "oss01"}.get(s.name, ""))
            for s in site.servers
        ),
    )
    a = analyze(paired, solve(paired, "groups"), fail=("core1/L01",))
    assert a.failure is not None and a.failure.lost_servers == 3 and a.lost_writes == 12.0
    moved = dataclasses.replace(
        site,
        servers=tuple(
            dataclasses.replace(s, failover="oss04" if s.name == "oss01" else "")
            for s in site.servers
        ),
    )
    plan = solve(site, "groups")
    a = analyze(moved, plan, fail=("core1/L01",))
    assert a.failure is not None
    fate = {s.name: s.carried_by for s in a.failure.servers}
    assert fate == {"oss01": "oss04", "oss02": "", "oss03": ""}
    assert a.lost_writes == 8.0  # oss02 and oss03's 4 OSTs each


def test_a_leaf_with_servers_only_is_a_failure_name() -> None:
    """A leaf module that holds servers but no router could not be failed at all
    (E-FAIL-NAME): it is a leaf whose loss cuts those servers off."""
    from lnetgen.traffic.routes import resolve_down

    site = _site(DEMO)
    plan = solve(site, "groups")
    bare = dataclasses.replace(
        plan, routers=tuple(r for r in plan.routers if r.leaf != "core2/L03")
    )
    down = resolve_down(bare, ["core2/L03"])
    assert down.routers == () and down.servers == ("mds01", "mds02")
    whole = resolve_down(plan, ["core2"])
    assert set(whole.servers) == {s.name for s in plan.servers if s.leaf.startswith("core2/")}
    assert resolve_down(plan, ["rtr01"]).servers == ()


# ---------------------------------------------------------------- 3. report cosmetics


def test_report_without_torus_says_nothing_of_torus_links_and_numbers_sections(
    tmp_path: Path,
) -> None:
    out = tmp_path / "r.html"
    res = CliRunner().invoke(main, ["report", str(ROOT / "sites" / "wolf.yaml"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text()
    assert "torus link saturates" not in html
    numbers = [int(n) for n in re.findall(r"<h2>(\d+)\. ", html)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 4
    out2 = tmp_path / "d.html"
    CliRunner().invoke(main, ["report", str(DEMO), "-o", str(out2)])
    torus = out2.read_text()
    assert "a torus link saturates above" in torus
    assert [int(n) for n in re.findall(r"<h2>(\d+)\. ", torus)] == [1, 2, 3, 4, 5]
