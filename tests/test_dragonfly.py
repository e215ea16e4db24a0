"""Dragonfly client sides (HPE Slingshot): inventory, distances, nearest-neighbor, the throughput
model's local and global links, and analyze's group report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from lnetgen import topology
from lnetgen.analyze import analyze
from lnetgen.cli import main
from lnetgen.distance import client_router_hops
from lnetgen.inventory import check, load_site
from lnetgen.rates import Rate
from lnetgen.solve import solve
from lnetgen.throughput import WorkloadSpec, predict

ROOT = Path(__file__).resolve().parent.parent
MINI = ROOT / "tests" / "cases" / "valid" / "dragonfly" / "site.yaml"
SLINGSHOT = ROOT / "sites" / "slingshot.yaml"


# ----------------------------------------------------------------------------- distances


def test_hops_by_hand() -> None:
    # 4 switches per group: 0-3 group 0, 4-7 group 1
    a = np.asarray([0, 0, 0, 5, -1])
    b = np.asarray([0, 3, 4, 1, -1])
    assert topology.dragonfly_hops(a, b, 4).tolist() == [2, 3, 5, 5, 5]


@given(
    st.integers(1, 6),
    st.lists(st.integers(-1, 40), min_size=1, max_size=20),
    st.lists(st.integers(-1, 40), min_size=1, max_size=20),
)
def test_hops_properties(switches: int, a: list[int], b: list[int]) -> None:
    """Symmetric; 2 exactly on one known switch, 3 exactly inside one group, 5 otherwise."""
    h = topology.dragonfly_hops(np.asarray(a)[:, None], np.asarray(b)[None, :], switches)
    assert (
        h == topology.dragonfly_hops(np.asarray(b)[:, None], np.asarray(a)[None, :], switches).T
    ).all()
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            known = x >= 0 and y >= 0
            want = 2 if known and x == y else 3 if known and x // switches == y // switches else 5
            assert h[i, j] == want


# ----------------------------------------------------------------------------- inventory


def test_mini_site_places() -> None:
    site, _ = load_site(str(MINI))
    d = site.dragonfly
    assert d is not None and (d.groups, d.switches, d.global_links, d.local_links) == (3, 2, 1, 1)
    assert site.clients.switch is not None
    # nid001-002 on g0s0, 003-004 on g0s1, 005-006 on g1s0, ...
    assert site.clients.switch.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert [r.dragonfly for r in site.routers] == [(0, 1), (1, 1)]
    hops = client_router_hops(site, np.arange(len(site.clients)), list(site.routers))
    assert hops[:, 0].tolist() == [3, 3, 2, 2, 5, 5, 5, 5, 5, 5, 5, 5]
    assert hops[:, 1].tolist() == [5, 5, 5, 5, 3, 3, 2, 2, 5, 5, 5, 5]


def _mini(text_edit: tuple[str, str], tmp_path: Path) -> list[str]:
    text = MINI.read_text()
    assert text_edit[0] in text
    (tmp_path / "site.yaml").write_text(text.replace(*text_edit))
    _site, diags = check(str(tmp_path / "site.yaml"))
    return [d.format() for d in diags if d.severity != "info"]


def test_unplaced_and_strange_clients(tmp_path: Path) -> None:
    got = _mini(('"nid[009-012]", group: 2', '"nid[009-011],gpu1", group: 2'), tmp_path)
    assert any("E-ATTACH-NODE" in g and "gpu1 is not a client" in g for g in got), got
    got = _mini(('"nid[009-012]", group: 2', '"nid[009-011]", group: 2'), tmp_path)
    assert any("1 client(s) are not attached to the dragonfly: nid012" in g for g in got), got
    got = _mini(('"nid[009-012]", group: 2', '"nid[008-011]", group: 2'), tmp_path)
    assert any("nid008 attached twice" in g for g in got), got


def test_router_place_outside(tmp_path: Path) -> None:
    got = _mini(("dragonfly: {group: 1, switch: 1}", "dragonfly: {group: 1, switch: 2}"), tmp_path)
    assert any(
        "error[E-DFLY-PLACE] $.routers[1].dragonfly: rtr2: switch 2 does not exist" in g
        for g in got
    ), got


# ----------------------------------------------------------------------------- strategies


@pytest.mark.parametrize(
    "strategy", ["nearest-neighbor", "round-robin", "projection", "groups", "baseline"]
)
def test_every_strategy_solves_the_mini_site(strategy: str) -> None:
    site, _ = load_site(str(MINI))
    plan = solve(site, strategy)
    assert plan.strategy == strategy


def test_nearest_keeps_clients_in_their_group() -> None:
    """Each client of groups 0 and 1 gets the router of its own group (balanced: 6 each); the
    clients of group 2 have none and cross a global link."""
    site, _ = load_site(str(MINI))
    a = analyze(site, solve(site, "nearest-neighbor"), throughput=None, with_n_minus_1=False)
    d = a.dragonfly
    assert d is not None
    w = d.writes
    assert w.cross_group / w.flows == pytest.approx(4 / 12)
    assert w.same_switch / w.flows == pytest.approx(4 / 12)
    rr = analyze(site, solve(site, "round-robin"), throughput=None, with_n_minus_1=False)
    assert rr.dragonfly is not None
    assert rr.dragonfly.writes.cross_group / rr.dragonfly.writes.flows > w.cross_group / w.flows


def test_slingshot_nearest_halves_global_crossings() -> None:
    """On the reference site each leaf's 4 routers sit in 4 of the 8 groups: nearest-neighbor
    keeps the clients of those 4 groups at home (50 % cross), round-robin spreads every client
    over every group's router (7 of 8 cross)."""
    site, _ = load_site(str(SLINGSHOT))
    share, busiest = {}, {}
    for s in ("nearest-neighbor", "round-robin"):
        a = analyze(site, solve(site, s), throughput=None, with_n_minus_1=False)
        assert a.dragonfly is not None
        share[s] = a.dragonfly.writes.cross_group / a.dragonfly.writes.flows
        busiest[s] = a.dragonfly.writes.busiest_flows
    assert share["nearest-neighbor"] == pytest.approx(0.5)
    assert share["round-robin"] == pytest.approx(7 / 8)
    # the clients of a group with no router of a leaf spread over that leaf's 4 routers: the
    # busiest pair of groups carries 2.3 flows (8.0 when the tied costs sent a whole group to
    # one router), against round-robin's 2.0
    assert busiest["nearest-neighbor"] == pytest.approx(2.25, abs=0.06)
    assert busiest["round-robin"] == pytest.approx(2.0)


def test_tie_break_never_costs_a_hop() -> None:
    """The spread costs keep the minimal total hop count: scaled hops dominate the tie-break."""
    from lnetgen.strategies.nearest import spread_global_ties

    site, _ = load_site(str(SLINGSHOT))
    members = np.arange(len(site.clients))
    routers = [r for r in site.routers if r.attach.leaf == "L01"]
    hops = client_router_hops(site, members, routers)
    cost = spread_global_ties(site, members, hops)
    n, m = hops.shape
    assert (cost // (n * (m - 1) + 1) == hops).all()
    assert (cost[hops < 5] % (n * (m - 1) + 1) == 0).all()


# ----------------------------------------------------------------------------- throughput


def test_global_links_bound_the_prediction() -> None:
    """By hand: the mini site's global links carry 1 GB/s each way, one link per pair of
    groups; injection, local links and routers 10 GB/s; the rest n/a.  Under baseline each of
    the 12 ranks (one per client) splits its data over both routers (g0s1, g1s1): the 4 clients
    of a group put 4 half-streams on one global bundle (g0->g1, g1->g0, g2->g0, g2->g1), so each
    rank gets r with 4 * r / 2 = 1000 MB/s: r = 500, aggregate 6 GB/s."""
    site, _ = load_site(str(MINI))
    plan = solve(site, "baseline")
    spec = WorkloadSpec(ranks=12)
    p = predict(site, plan, spec)
    assert p.bottleneck is not None and p.bottleneck.kind == "global link"
    assert p.bottleneck.capacity_mb_s == 1000.0
    assert p.aggregate_mb_s == pytest.approx(6000.0)
    # with fast global links the routers bind: 12 half-streams of r on each, 6 r = 10 GB/s
    fast = replace(site, rates=replace(site.rates, global_link=Rate(1e5, "test")))
    q = predict(fast, plan, spec)
    assert q.bottleneck is not None and q.bottleneck.kind == "router"
    assert q.aggregate_mb_s == pytest.approx(20000.0)


def test_local_links_are_used_inside_a_group() -> None:
    site, _ = load_site(str(MINI))
    p = predict(site, solve(site, "nearest-neighbor"), WorkloadSpec(ranks=12))
    assert "local link" in p.bound_mb_s and "global link" in p.bound_mb_s


# ----------------------------------------------------------------------------- CLI


def test_cli_analyze_and_compare() -> None:
    r = CliRunner().invoke(main, ["analyze", str(MINI), "-s", "nearest-neighbor"])
    assert r.exit_code == 0, r.output
    assert "dragonfly 3 groups x 2 switches, 1 global links per pair of groups" in r.output
    assert "33.3 % across a global link" in r.output
    r = CliRunner().invoke(main, ["compare", str(MINI)])
    assert r.exit_code == 0, r.output
    # the dragonfly table: nearest-neighbor keeps a third of the writes on the client's switch
    table = r.output.split("dragonfly  ")[1].splitlines()[1:11]
    lines = {tuple(ln.split()[:2]): ln.split()[2:8:2] for ln in table}
    assert lines["nearest-neighbor", "writes"] == ["33.3", "33.3", "33.3"]  # switch, group, global
    assert lines["round-robin", "writes"] == ["16.7", "16.7", "66.7"]
    # its reads come back through the routers the servers pick, two thirds across a global
    # link, as analyze says (compare showed the writes alone)
    assert lines["nearest-neighbor", "reads"] == ["16.7", "16.7", "66.7"]
    r = CliRunner().invoke(main, ["compare", str(MINI), "--format", "json"])
    rows = {row["strategy"]: row for row in json.loads(r.output)}
    g = rows["nearest-neighbor"]["dragonfly"]
    assert g["cross_group"] / g["flows"] == pytest.approx(1 / 3, abs=1e-5)
    g = rows["nearest-neighbor"]["dragonfly_reads"]
    assert g["cross_group"] / g["flows"] == pytest.approx(2 / 3, abs=1e-5)
    # a site without a dragonfly has no such table
    r = CliRunner().invoke(main, ["compare", str(ROOT / "tests/cases/valid/multirail/site.yaml")])
    assert "round-robin" in r.output and "dragonfly" not in r.output


def test_cli_place_clients() -> None:
    r = CliRunner().invoke(
        main,
        [
            "place",
            "clients",
            str(MINI),
            "--oss",
            "oss1",
            "--per-oss",
            "2",
            "-s",
            "nearest-neighbor",
        ],
    )
    assert r.exit_code == 0, r.output


def test_a_plan_with_routers_the_inventory_lacks_is_an_input_error(tmp_path: Path) -> None:
    """Analyzing a plan against an inventory without one of its routers names the router
    (a KeyError traceback before: the dragonfly figures look routers up in the inventory)."""
    from lnetgen.diagnostics import InputError

    site, _ = load_site(str(MINI))
    plan = solve(site, "nearest-neighbor")
    (tmp_path / "site.yaml").write_text(MINI.read_text().replace("rtr2", "rtr9"))
    other, _ = load_site(str(tmp_path / "site.yaml"))
    with pytest.raises(InputError) as exc:
        analyze(other, plan, throughput=None)
    d = exc.value.diagnostics[0]
    assert d.code == "E-ANALYZE-PLAN" and "routers the inventory does not: rtr2" in d.message
