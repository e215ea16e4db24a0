"""Analysis on the demo site, by hand-worked numbers, and the strategy ranking on Spider.

Demo (sites/demo.yaml): 96 clients on a 4x4x4 torus (xyz routing, 2 nodes per chip), 20
routers, 4 per leaf module on core1/L01, core1/L02, core2/L01, core2/L02 and core2/L03; OSS
oss01-03 on core1/L01, oss04-06 on core1/L02, oss07-09 on core2/L01, oss10-12 on core2/L02
(4 OSTs each, 48 OSTs = 48 flows); the two MDS on core2/L03 (no flows).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from lnetgen import topology
from lnetgen.analyze import (
    DEGRADED,
    FALLBACK,
    LOST,
    Settings,
    Workload,
    analyze,
    compare,
    failure_report,
    index_plan,
    n_minus_1,
    resolve_failures,
    torus_loads,
)
from lnetgen.cli.analyze import analyze_cmd
from lnetgen.cli.compare import compare_cmd
from lnetgen.diagnostics import InputError
from lnetgen.inventory import load_site
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.solve import solve, strategy_names

SITES = Path(__file__).resolve().parent.parent / "sites"
DEMO = str(SITES / "demo.yaml")
SPIDER = SITES / "spider.yaml"


@cache
def site(name: str = "demo") -> Site:
    return load_site(str(SITES / f"{name}.yaml"))[0]


@cache
def plan(strategy: str, name: str = "demo") -> Plan:
    return solve(site(name), strategy)


# ---------------------------------------------------------------------------- storage fabric


def test_baseline_spine_crossing_by_hand() -> None:
    """Baseline: every OSS is reached through all 20 routers equally; 4 of them share the OSS's
    leaf, so 16/20 = 0.8 of every OSS's flows cross the spine, reads and writes alike.

    Between switches: an OSS on core1 (oss01-06) has 12 of its 20 routers on core2, an OSS on
    core2 (oss07-12) has 8 on core1: (6 * 12/20 + 6 * 8/20) / 12 = 0.5 of all flows.

    Uplinks (12 per leaf), writes: the 4 routers of a leaf carry 4/20 of the 48 flows = 9.6;
    for an OSS leaf 3 of the 12 OSS are local, so 9.6 * 9/12 = 7.2 go up, and the leaf's 3 OSS
    receive 12 flows, 16/20 of them from elsewhere = 9.6 down; core2/L03 (MDS only) sends all
    its 9.6 up and receives nothing.  Busiest uplink 9.6 / 12 = 0.8 flows; mean over the 5
    leaves x 12 uplinks x 2 directions = (4 * (7.2 + 9.6) + 9.6) / 120 = 0.64; ratio 1.25.
    """
    a = analyze(site(), plan("baseline"), with_n_minus_1=False)
    assert a.flows == pytest.approx(48.0)
    for phase in (a.fabric.writes, a.fabric.reads):
        assert phase.served == pytest.approx(48.0)
        assert phase.fraction == pytest.approx(0.8)
        assert phase.crossing == pytest.approx(38.4)
        assert phase.inter_switch == pytest.approx(24.0)
        assert phase.max_uplink == pytest.approx(0.8)
        assert phase.mean_uplink == pytest.approx(0.64)
        assert phase.imbalance == pytest.approx(1.25)
    leaves = {lf.leaf: lf for lf in a.fabric.writes.leaves}
    assert leaves["core1/L01"].up == pytest.approx(7.2)
    assert leaves["core1/L01"].down == pytest.approx(9.6)
    assert leaves["core2/L03"].up == pytest.approx(9.6)
    assert leaves["core2/L03"].down == 0
    # 12 OSS x 20 routers, 4 of them local to each OSS
    assert a.fabric.routes == 240
    assert a.fabric.crossing_routes == 192


@pytest.mark.parametrize("strategy", [s for s in strategy_names() if s != "baseline"])
def test_fine_grained_layouts_never_cross_the_spine(strategy: str) -> None:
    a = analyze(site(), plan(strategy), with_n_minus_1=False)
    assert a.fabric.writes.fraction == 0
    assert a.fabric.reads.fraction == 0
    assert a.fabric.crossing_routes == 0
    assert a.fabric.writes.served == pytest.approx(48.0)


def test_weight_by_servers_counts_the_mds() -> None:
    """One flow per server: 14 flows; baseline still sends 16/20 of each server's flows across
    the spine (the MDS on core2/L03 also have 4 local routers)."""
    settings = Settings(weight_by="servers")
    a = analyze(site(), plan("baseline"), settings=settings, with_n_minus_1=False)
    assert a.flows == pytest.approx(14.0)
    assert a.fabric.writes.fraction == pytest.approx(0.8)


# ---------------------------------------------------------------------------- failures


def test_groups_leaf_failure_falls_back_to_the_backup_group() -> None:
    """Groups (4:3): o2ib100 is core1/L01's group, backed up at priority 1 by core2/L01's
    group (4 routers: ``backup: balanced`` puts every scratch backup on the other switch).
    Losing the whole leaf leaves only the backup: the clients and oss01-03 fall back."""
    p = plan("groups")
    net = next(n for n in p.storage_nets() if n.group == "core1/L01#1")
    ix = index_plan(site(), p)
    rep = failure_report(ix, resolve_failures(p, ["core1/L01"]))
    assert rep.failed == ("rtr01", "rtr02", "rtr03", "rtr04")
    client = [x for x in rep.pairs if x.side == "client" and x.net == net.name]
    assert len(client) == 1
    fb = client[0]
    assert (fb.status, fb.planned_priority, fb.live_priority) == (FALLBACK, 0, 1)
    assert (fb.planned_gateways, fb.live_gateways, fb.members) == (4, 4, 96)
    server = [x for x in rep.pairs if x.side == "server" and x.who == "oss[01-03]"]
    assert [(x.status, x.live_priority) for x in server] == [(FALLBACK, 1)]
    assert not [x for x in rep.pairs if x.status == LOST]
    # the group name and the net name fail the same routers
    assert resolve_failures(p, ["core1/L01#1"]) == rep.failed
    assert resolve_failures(p, [net.name]) == rep.failed


def test_groups_single_router_failure_degrades_but_keeps_priority_0() -> None:
    """One router of a 4-router group: 3 gateways stay at priority 0, so LNet does not fall
    back (a backup priority only serves when the whole group is gone)."""
    p = plan("groups")
    rep = failure_report(index_plan(site(), p), ["rtr01"])
    client = [x for x in rep.pairs if x.side == "client"]
    assert [(x.status, x.live_priority, x.live_gateways) for x in client] == [(DEGRADED, 0, 3)]
    nm = n_minus_1(index_plan(site(), p))
    assert nm.routers_losing_a_net == 0
    assert all(s.fallback == 0 and s.lost == 0 for s in nm.routers)


def test_round_robin_router_failure_falls_back_to_the_set() -> None:
    """Round-robin: 24 clients (every 4th) use rtr01 at priority 0 for o2ib100; without it
    they fall back to the set's other three routers at priority 1."""
    p = plan("round-robin")
    rep = failure_report(index_plan(site(), p), ["rtr01"])
    client = [x for x in rep.pairs if x.side == "client"]
    assert [(x.status, x.members, x.live_priority, x.live_gateways) for x in client] == [
        (FALLBACK, 24, 1, 3)
    ]
    assert rep.weighted["client"][FALLBACK] == 24


def test_projection_loses_the_net() -> None:
    """Projection on core1/L01 (4 routers, 3 OSS): oss01 gets rtr01+rtr04, oss02 rtr02 alone,
    oss03 rtr03 alone.  Losing rtr02 loses o2ib101 for all 96 clients and oss02's way back;
    losing rtr01 only degrades o2ib100."""
    p = plan("projection")
    ix = index_plan(site(), p)
    rep = failure_report(ix, ["rtr02"])
    lost = [(x.side, x.who, x.net) for x in rep.pairs if x.status == LOST]
    assert lost == [("client", "clients-gni", "o2ib101"), ("server", "oss02", "gni")]
    assert rep.weighted["client"][LOST] == 96
    rep1 = failure_report(ix, ["rtr01"])
    assert [(x.status, x.net, x.live_gateways) for x in rep1.pairs if x.side == "client"] == [
        (DEGRADED, "o2ib100", 1)
    ]
    nm = n_minus_1(ix)
    assert nm.worst is not None
    assert (nm.worst.router, nm.worst.lost, nm.worst.server_lost) == ("rtr02", 96, 1)
    # sole gateways: 2 per OSS leaf (4 leaves); the MDS leaf pairs 2 routers with each MDS
    assert nm.routers_losing_a_net == 8
    # traffic of the lost net is unserved: oss02's 4 flows
    a = analyze(site(), p, fail=["rtr02"])
    assert a.lost_writes == pytest.approx(4.0)
    assert a.lost_reads == pytest.approx(4.0)
    assert a.fabric.writes.served == pytest.approx(44.0)


def test_n_minus_1_matches_explicit_single_failures() -> None:
    """The vectorized N-1 count equals failing each router on its own."""
    for strategy in ("projection", "round-robin", "groups", "nearest-neighbor"):
        p = plan(strategy)
        ix = index_plan(site(), p)
        nm = n_minus_1(ix)
        for one in nm.routers:
            rep = failure_report(ix, [one.router])
            assert one.lost == rep.weighted["client"][LOST]
            assert one.fallback == rep.weighted["client"][FALLBACK]
            assert one.degraded == rep.weighted["client"][DEGRADED]
            assert one.server_lost == rep.weighted["server"][LOST]
            assert one.server_fallback == rep.weighted["server"][FALLBACK]


def test_unknown_failure_name_is_an_input_error() -> None:
    with pytest.raises(InputError, match="nosuch"):
        resolve_failures(plan("groups"), ["nosuch"])


def _edited(p: Plan, edit: Any) -> Plan:
    """``p`` edited as a plan.json of format 1 (each class lists its routes), which lnetgen
    still reads."""
    d = p.to_dict()
    for c, cc in zip(d["client_classes"], p.client_classes, strict=True):
        del c["route_sets"]
        c["routes"] = [r.as_dict() for r in cc.routes]
    del d["route_sets"]
    d["format_version"] = 1
    edit(d)
    return Plan.from_dict(json.loads(json.dumps(d)))


def test_backup_without_interface_is_alive_only_on_paper() -> None:
    """Drop the o2ib100 interface of a router that backs up core1/L01's group: the clients'
    backup route through it is dead on arrival, and the servers' route back names a NID no
    router has.  Losing core1/L01 then leaves 3 live backup gateways, not 4."""
    p = plan("groups")
    group = next(n for n in p.storage_nets() if n.group == "core1/L01#1")
    net = group.name
    backup = next(r for r in group.routers if r not in group.primary_routers)
    assert backup == "rtr09"

    def edit(d: dict[str, Any]) -> None:
        r = next(r for r in d["routers"] if r["name"] == backup)
        r["interfaces"] = [i for i in r["interfaces"] if i["net"] != net]

    broken = _edited(p, edit)
    ix = index_plan(site(), broken)
    codes = sorted(f.code for f in ix.findings)
    assert codes == ["route-dead-on-paper", "route-dead-on-paper"]
    text = " ".join(f.message for f in ix.findings)
    assert "rtr09" in text and "avoid_asym_router_failure" in text
    assert "10.10.0.9@" + net in text
    rep = failure_report(ix, resolve_failures(broken, ["core1/L01"]))
    fb = next(x for x in rep.pairs if x.side == "client")
    assert (fb.status, fb.live_gateways) == (FALLBACK, 3)


def test_missing_hop_count_is_a_finding() -> None:
    p = plan("projection")

    def edit(d: dict[str, Any]) -> None:
        del d["client_classes"][0]["routes"][0]["hop"]

    ix = index_plan(site(), _edited(p, edit))
    assert [f.code for f in ix.findings] == ["route-hop"]
    assert "no hop count" in ix.findings[0].message


def test_priority_0_dead_on_paper_is_reported() -> None:
    """Projection gives oss02 the single gateway rtr02; without its o2ib101 interface the
    clients have nothing alive on paper for that net."""

    def edit(d: dict[str, Any]) -> None:
        r = next(r for r in d["routers"] if r["name"] == "rtr02")
        r["interfaces"] = [i for i in r["interfaces"] if i["net"] != "o2ib101"]

    ix = index_plan(site(), _edited(plan("projection"), edit))
    codes = {f.code for f in ix.findings}
    assert "pair-without-route" in codes


# ---------------------------------------------------------------------------- torus


def test_one_flow_follows_the_dimension_order_path() -> None:
    """A single client -> oss02 pair (gateway rtr02 at (2,0,0)) loads exactly the links of
    ``topology.path_links``, one flow each, both ways."""
    s = site()
    ix = index_plan(s, plan("projection"))
    c = s.clients.names.index("nid00050")
    src = tuple(int(v) for v in s.clients.coords[c])
    wl = Workload("one", np.asarray([c]), ("oss02",), np.asarray([1.0]))
    rep = torus_loads(ix, wl)
    assert rep is not None
    path = topology.path_links(src, (2, 0, 0), s.torus.dims, "xyz")  # type: ignore[union-attr]
    back = topology.path_links((2, 0, 0), src, s.torus.dims, "xyz")  # type: ignore[union-attr]
    assert rep.writes.volume == len(path) > 0
    assert rep.writes.max == 1 and rep.writes.used == len(path)
    assert {n for n, _ in rep.writes.top} == {link.name for link in path}
    assert {n for n, _ in rep.reads.top} == {link.name for link in back}
    assert rep.writes.saturated == 0


def test_saturation_counts_links_past_link_over_ost_rate() -> None:
    """17 flows on one path: 17 x 180 MB/s > 3,020 MB/s on every link of the path (the
    threshold is 16.78 flows); 16 flows stay below."""
    s = site()
    ix = index_plan(s, plan("projection"))
    c = s.clients.names.index("nid00050")
    hops = len(
        topology.path_links(tuple(int(v) for v in s.clients.coords[c]), (2, 0, 0), (4, 4, 4), "xyz")
    )
    spider_rates = Settings(link_mb_s=3020.0, ost_mb_s=180.0)
    for n, expect in ((17, hops), (16, 0)):
        wl = Workload("many", np.full(n, c), ("oss02",) * n, np.ones(n))
        rep = torus_loads(ix, wl, spider_rates)
        assert rep is not None
        assert rep.writes.max == n
        assert rep.writes.saturated == expect
    rep = torus_loads(ix, wl, Settings(link_mb_s=1000.0, ost_mb_s=180.0))
    assert rep is not None and rep.writes.saturated == hops  # 16 x 180 > 1000
    # the test site gives no rates: saturation is unknown, not another machine's figure
    rep = torus_loads(ix, wl)
    assert rep is not None and rep.writes.saturated == 0
    assert rep.saturation == float("inf")


def test_router_links_writes_on_z_reads_on_x() -> None:
    """Seed 001: with xyz routing a write reaches the router over a Z link unless the client
    is in the router's Z plane, and a read leaves over an X link unless the client shares the
    router's X column.  Projection's uniform load gives every client the same weight towards
    a router, so the Z share of writes is exactly the share of clients off the router's Z
    plane (counting only clients on other chips), and likewise for X on reads."""
    s = site()
    a = analyze(s, plan("projection"), with_n_minus_1=False)
    assert a.torus is not None
    coords = np.asarray(s.clients.coords)
    for r in a.torus.routers:
        if r.writes == 0:
            continue  # MDS routers carry no bulk flows
        other = ~(coords == np.asarray(r.coords)).all(axis=1)
        z_share = ((coords[:, 2] != r.coords[2]) & other).sum() / other.sum()
        x_share = ((coords[:, 0] != r.coords[0]) & other).sum() / other.sum()
        local = r.writes * (1 - other.sum() / len(coords))
        assert (r.writes_in[4] + r.writes_in[5]) == pytest.approx((r.writes - local) * z_share)
        assert (r.reads_out[0] + r.reads_out[1]) == pytest.approx((r.reads - local) * x_share)
        assert z_share > 0.6 and x_share > 0.6


def test_reads_retrace_writes_when_servers_use_the_clients_routers() -> None:
    """Baseline, projection and groups: each server routes back through exactly the routers
    every client uses for it, so reads carry the same flow-hops as writes.  Round-robin:
    servers route back through the whole set, so reads travel further than writes; and
    nearest-neighbor's writes travel less than round-robin's."""
    for strategy in ("baseline", "projection", "groups"):
        a = analyze(site(), plan(strategy), with_n_minus_1=False)
        assert a.torus is not None
        assert a.torus.writes.volume == pytest.approx(a.torus.reads.volume)
    nn = analyze(site(), plan("nearest-neighbor"), with_n_minus_1=False)
    rr = analyze(site(), plan("round-robin"), with_n_minus_1=False)
    assert nn.torus is not None and rr.torus is not None
    assert rr.torus.reads.volume > rr.torus.writes.volume
    assert nn.torus.writes.volume < rr.torus.writes.volume


def test_clients_served_per_router() -> None:
    a = analyze(site(), plan("round-robin"), with_n_minus_1=False)
    assert a.torus is not None
    served = {r.name: r.clients for r in a.torus.routers}
    assert set(served.values()) == {24}  # 96 clients dealt over 4 routers per set


def test_ports_off_gives_the_same_link_loads() -> None:
    p = plan("nearest-neighbor")
    a = analyze(site(), p, with_n_minus_1=False)
    b = analyze(site(), p, with_n_minus_1=False, ports=False)
    assert a.torus is not None and b.torus is not None
    assert a.torus.writes == b.torus.writes
    assert a.torus.reads == b.torus.reads


def test_plan_from_another_site_is_rejected() -> None:
    wolf = plan("projection", "wolf")
    with pytest.raises(InputError):
        index_plan(site(), wolf)


def test_analysis_is_deterministic_and_json_ready() -> None:
    one = analyze(site(), plan("groups")).as_dict()
    two = analyze(site(), plan("groups")).as_dict()
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    assert one["torus"]["routers"][0]["writes_in"].keys() == {"X+", "X-", "Y+", "Y-", "Z+", "Z-"}


# ---------------------------------------------------------------------------- compare + CLI


def test_compare_demo_rows() -> None:
    rows = {r.strategy: r for r in compare(site())}
    assert list(rows) == strategy_names()
    assert rows["baseline"].spine_fraction == pytest.approx(0.8)
    assert rows["projection"].worst_router == "rtr02"
    assert rows["projection"].routers_losing_a_net == 8
    assert rows["round-robin"].worst_fallback == 24
    for r in rows.values():
        assert not r.error
        assert r.placed_write_max <= r.default_write_max


@pytest.mark.skipif(not SPIDER.exists(), reason="sites/spider.yaml not present")
def test_spider_ranks_baseline_round_robin_projection() -> None:
    """Seed 000's order (baseline < round-robin < projection) on two metrics:

    * spine crossings: baseline sends 190/196 of its flows across a spine (an OSS shares its
      module with 6 of the 196 routers, the MDS-path routers included now that the site carries
      its MDS), round-robin and projection none -- this separates
      baseline from the other two but ties them;
    * torus link load with placement (one client per OST, 1,344 clients, placed nearest to the
      routers they use): the busiest link carries strictly fewer flows from baseline to
      round-robin to projection, for writes and for reads.
    """
    s = load_site(str(SPIDER))[0]
    three = ["baseline", "round-robin", "projection"]
    rows = {r.strategy: r for r in compare(s, three, uniform_torus=False)}
    b, rr, pr = rows["baseline"], rows["round-robin"], rows["projection"]
    assert b.spine_fraction == pytest.approx(190 / 196, abs=1e-6)
    assert rr.spine_fraction == 0 and pr.spine_fraction == 0
    assert b.placed_write_max > rr.placed_write_max > pr.placed_write_max
    assert b.placed_read_max > rr.placed_read_max > pr.placed_read_max
    assert b.placed_write_volume > rr.placed_write_volume > pr.placed_write_volume
    # placement beats the job launcher's node order for every layout
    for r in (b, rr, pr):
        assert r.placed_write_max < r.default_write_max


def test_cli_analyze_text_and_json() -> None:
    runner = CliRunner()
    res = runner.invoke(analyze_cmd, [DEMO, "--strategy", "baseline"])
    assert res.exit_code == 0, res.output
    assert "80.0 % of 48.0 flows cross the spine" in res.output
    assert "N-1:" in res.output
    res = runner.invoke(analyze_cmd, [DEMO, "-s", "projection", "--format", "json"])
    assert res.exit_code == 0
    doc = json.loads(res.output)
    assert doc["n_minus_1"]["worst"]["router"] == "rtr02"


def test_cli_analyze_fail_exit_codes() -> None:
    runner = CliRunner()
    res = runner.invoke(analyze_cmd, [DEMO, "-s", "groups", "--fail", "rtr[01-04]"])
    assert res.exit_code == 0, res.output  # fallback only: still served
    assert "fallback client clients-gni (96 clients)" in res.output
    # the leaf those routers are cabled to takes its servers with it: their OSTs are lost
    res = runner.invoke(analyze_cmd, [DEMO, "-s", "groups", "--fail", "core1/L01"])
    assert res.exit_code == 1, res.output
    assert "lost     server oss01 (oss, 4 OSTs): cut off; targets lost" in res.output
    res = runner.invoke(analyze_cmd, [DEMO, "-s", "projection", "--fail", "rtr02"])
    assert res.exit_code == 1
    assert "lost     client clients-gni (96 clients) -> o2ib101" in res.output
    res = runner.invoke(analyze_cmd, [DEMO, "--fail", "nosuch"])
    assert res.exit_code == 2


def test_cli_analyze_plan_file(tmp_path: Path) -> None:
    p = tmp_path / "plan.json"
    p.write_text(plan("round-robin").to_json())
    runner = CliRunner()
    res = runner.invoke(analyze_cmd, [DEMO, "--plan", str(p), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["strategy"] == "round-robin"
    res = runner.invoke(analyze_cmd, [DEMO, "--plan", str(p), "-s", "groups"])
    assert res.exit_code == 2
    p.write_text("{}")
    res = runner.invoke(analyze_cmd, [DEMO, "--plan", str(p)])
    assert res.exit_code == 2


def test_cli_compare() -> None:
    runner = CliRunner()
    res = runner.invoke(compare_cmd, [DEMO, "--strategies", "baseline,projection"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("strategy")
    assert lines[1].startswith("baseline") and "80.0 %" in lines[1]
    assert lines[2].startswith("projection")
    res = runner.invoke(compare_cmd, [DEMO, "--strategies", "nope"])
    assert res.exit_code == 2


def test_gateway_on_the_wrong_net_is_dead_on_paper() -> None:
    """A client route naming the router's storage-side NID: the client cannot reach it."""

    def edit(d: dict[str, Any]) -> None:
        for r in d["client_classes"][0]["routes"]:
            if r["net"] == "o2ib101":
                r["gateway"] = "10.10.0.2@o2ib101"

    ix = index_plan(site(), _edited(plan("projection"), edit))
    text = " ".join(f.message for f in ix.findings)
    assert "not on the sender's net gni" in text
    assert "clients-gni has no route alive on paper to o2ib101" in text
