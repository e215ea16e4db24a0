"""The throughput model on tiny sites computed by hand: a TOR's uplinks, the route to the MDS,
the IO node's compute port on a fat tree without OpenSM's routes, and ranks no known rate
bounds (docs/throughput.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lnetgen.inventory import load_site
from lnetgen.solve import solve
from lnetgen.throughput import Prediction, parse_inline, predict

COORDS = "node,x,y,z\n" + "".join(
    f"nid{i:03d},{x},0,0\n" for i, x in enumerate([1, 1, 5, 5, 2, 6, 3, 7], start=1)
)

# two TORs, each with a router and an OSS; uplinks 0.5 GB/s
TORS = """
site: tiny
strategy: {default: projection}
client_nets:
  - {name: gni, interface: ipogif0}
clients:
  - {name: compute, nodes: "nid[001-008]", net: gni, nid: number}
topology:
  kind: torus
  dims: [8, 1, 1]
  nodes_per_chip: 2
  routing: xyz
  coordinates: {csv: coords.csv}
rates:
  torus_link: {x: "1 GB/s", y: "1 GB/s", z: "1 GB/s", source: "test"}
  router: {rate: "2 GB/s", source: "test"}
  ib_link: {rate: "10 GB/s", source: "test"}
  oss: {rate: "1.5 GB/s", source: "test"}
  uplink: {rate: "0.5 GB/s", source: "test"}
  ost: {rate: "1 GB/s", source: "test"}
fabrics:
  - name: stor
    role: storage
    switches:
      - {name: tor1, kind: tor, ports: 12, UPLINKSguid: "0x0002c90200200000"}
      - {name: tor2, kind: tor, ports: 12, UPLINKSguid: "0x0002c90200300000"}
filesystems:
  - {name: fs1}
routers:
  - name: rtr1
    client: {nid: "101@gni", interface: ipogif0}
    storage: {ip: 10.0.0.1, interface: ib0, guid: "0x0002c90300a00001"}
    attach: {switch: tor1, port: 1}
    coords: [0, 0, 0]
  - name: rtr2
    client: {nid: "102@gni", interface: ipogif0}
    storage: {ip: 10.0.0.2, interface: ib0, guid: "0x0002c90300a00002"}
    attach: {switch: tor2, port: 1}
    coords: [4, 0, 0]
servers:
  - {name: oss1, role: oss, fs: fs1, ip: 10.0.1.1, interface: ib0, guid: "0x0002c90300b00001",
     attach: {switch: tor1, port: 2}, osts: "0-1"}
  - {name: oss2, role: oss, fs: fs1, ip: 10.0.1.2, interface: ib0, guid: "0x0002c90300b00002",
     attach: {switch: tor2, port: 2}, osts: "2-3"}
  - {name: mds1, role: mds, fs: fs1, ip: 10.0.2.1, interface: ib0, guid: "0x0002c90300c00001",
     attach: {switch: tor1, port: 3}}
"""

# a ring of 8 chips, 30 MB/s X links, two routers; projection puts mds01 and oss01 behind rtr01
RING = """
site: ring3
strategy: {default: projection}
client_nets:
  - {name: gni, interface: ipogif0}
clients:
  - {name: compute, nodes: "nid[001-NODES]", net: gni, nid: number}
topology:
  kind: torus
  dims: [8, 1, 1]
  nodes_per_chip: PER_CHIP
  routing: xyz
  coordinates: {rule: linear, order: xyz, skip_routers: true}
fabrics:
  - name: sib
    role: storage
    switches:
      - name: core1
        kind: director
        spines: 2
        leaves: {count: 2, prefix: L, ports: 12, uplinks: 2}
filesystems:
  - {name: scratch, net_base: 100}
routers:
  - name: rtr01
    client: {nid: "201@gni", interface: ipogif0}
    storage: {ip: 10.10.0.1, interface: ib0}
    attach: {switch: core1, leaf: L01, port: 1}
    coords: [0, 0, 0]
ROUTER2servers:
  - {name: mds01, role: mds, fs: scratch, ip: 10.10.2.1, interface: ib0,
     attach: {switch: core1, leaf: L01, port: 5}}
  - {name: oss01, role: oss, fs: scratch, ip: 10.10.1.1, interface: ib0,
     attach: {switch: core1, leaf: L01, port: 6}, osts: OSS1}
OSS2rates:
  torus_link: {x: "30 MB/s", y: "1000 MB/s", z: "1000 MB/s", source: "test"}
RATES"""
ROUTER2 = """  - name: rtr02
    client: {nid: "202@gni", interface: ipogif0}
    storage: {ip: 10.10.0.2, interface: ib0}
    attach: {switch: core1, leaf: L02, port: 1}
    coords: [4, 0, 0]
"""
OSS2 = """  - {name: oss02, role: oss, fs: scratch, ip: 10.10.1.2, interface: ib0,
     attach: {switch: core1, leaf: L02, port: 6}, osts: [1]}
"""
RING_RATES = """  injection: {rate: "1000 MB/s", source: "test"}
  router: {rate: "1000 MB/s", source: "test"}
  ib_link: {rate: "1000 MB/s", source: "test"}
  uplink: {rate: "5 MB/s", source: "test"}
  oss: {rate: "1000 MB/s", source: "test"}
  ost: {rate: "1000 MB/s", source: "test"}
"""

# a fat tree: 6 compute nodes on two leaves, one IO node with one 10 MB/s compute port
FAT_TREE = """
site: ft
strategy: {default: nearest-neighbor, storage_lnd: o2ib, storage_net_base: 100}
client_nets:
  - {name: o2ib, interface: ib0}
clients:
  - {name: compute, nodes: "cn[01-06]", net: o2ib, nid: {ip: 10.1.0.1},
     guid_base: "0x0011750c00000000"}
topology:
  kind: fat-tree
  fabric: cib
  attach:
    - {nodes: "cn[01-04]", switch: cx1, leaf: L01}
    - {nodes: "cn[05-06]", switch: cx1, leaf: L02}
fabrics:
  - name: cib
    role: compute
    switches:
      - name: cx1
        kind: director
        spines: 2
        guid: "0x0011750b00000100"
        spine_guids: ["0x0011750b00000101", "0x0011750b00000102"]
        leaves:
          - {name: L01, ports: 8, uplinks: 2, guid: "0x0011750b00000001"}
          - {name: L02, ports: 8, uplinks: 2, guid: "0x0011750b00000002"}
  - name: sib
    role: storage
    switches:
      - {name: tor1, kind: tor, ports: 36, uplinks: 0, guid: "0x0002c90100000001"}
filesystems:
  - {name: scr}
routers:
  - name: io01
    client: {nid: "10.1.3.1@o2ib", interface: ib0, guid: "0x0011750a00000001",
             attach: {switch: cx1, leaf: L02, port: 8}}
    storage: {ip: 10.2.0.1, interface: ib1, guid: "0x0002c90300a00001"}
    attach: {switch: tor1, port: 1}
servers:
  - {name: oss1, role: oss, fs: scr, ip: 10.2.1.1, interface: ib0, osts: [0, 1, 2, 3],
     attach: {switch: tor1, port: 3}, guid: "0x0002c90300b00001"}
  - {name: mds1, role: mds, fs: scr, ip: 10.2.1.2, interface: ib0,
     attach: {switch: tor1, port: 4}, guid: "0x0002c90300b00002"}
rates:
  fabric_link: {rate: "10 MB/s", source: "test"}
  injection: {rate: "1000 MB/s", source: "test"}
  router: {rate: "1000 MB/s", source: "test"}
  ib_link: {rate: "1000 MB/s", source: "test"}
  oss: {rate: "1000 MB/s", source: "test"}
  ost: {rate: "1000 MB/s", source: "test"}
"""


def _predict(
    tmp_path: Path, text: str, strategy: str, workload: str, fail: tuple[str, ...] = ()
) -> Prediction:
    (tmp_path / "coords.csv").write_text(COORDS)
    path = tmp_path / "site.yaml"
    path.write_text(text)
    site = load_site(str(path))[0]
    return predict(site, solve(site, strategy), parse_inline(workload), fail=fail)


def _ring(two: bool = True, nodes: int = 6, per_chip: int = 1, rates: str = RING_RATES) -> str:
    text = RING.replace("ROUTER2", ROUTER2 if two else "").replace("OSS2", OSS2 if two else "")
    text = text.replace("OSS1", "[0]" if two else '"0-1"').replace("RATES", rates)
    return text.replace("NODES", f"{nodes:03d}").replace("PER_CHIP", str(per_chip))


@pytest.mark.parametrize("op", ["write", "read"])
def test_tor_uplinks_bind_traffic_between_tors(tmp_path: Path, op: str) -> None:
    # baseline: each rank sends half its data through the router on the other TOR, so each
    # TOR's one 500 MB/s uplink carries half of its two OSTs' ranks: r/2 * 2 <= 500, r = 500
    # MB/s per rank, 2 GB/s for 4 ranks (the OSS would allow 3 GB/s); as on one director
    p = _predict(tmp_path, TORS.replace("UPLINKS", "uplinks: 1, "), "baseline",
                 f"ranks=4,nodes=linear,op={op}")  # fmt: skip
    assert p.aggregate_mb_s == pytest.approx(2000.0)
    assert p.bottleneck is not None and p.bottleneck.kind in ("leaf uplinks", "leaf downlinks")
    assert p.bottleneck.capacity_mb_s == pytest.approx(500.0)
    assert p.bottleneck.name in ("tor1", "tor2") and not p.unmodelled
    assert p.bound_mb_s["leaf uplinks"] == pytest.approx(1000.0)


def test_tor_without_uplinks_crossed_is_not_modelled(tmp_path: Path) -> None:
    # no uplinks in the inventory: no capacity is invented (the OSS binds, 3 GB/s), but the
    # prediction says the crossing is not modelled, and is a bound
    p = _predict(tmp_path, TORS.replace("UPLINKS", ""), "baseline", "ranks=4,nodes=linear")
    assert p.aggregate_mb_s == pytest.approx(3000.0) and p.bound
    assert [u.split(":")[0] for u in p.unmodelled] == ["the uplinks of tor1", "the uplinks of tor2"]
    assert "not modelled: the uplinks of tor1" in p.why_bound
    # projection keeps every route on its TOR: nothing crosses, nothing to say
    p = _predict(tmp_path, TORS.replace("UPLINKS", ""), "projection", "ranks=4,nodes=linear")
    assert not p.unmodelled


def test_losing_the_route_to_the_mds_strands_every_rank(tmp_path: Path) -> None:
    # projection: mds01 and oss01 behind rtr01, oss02 behind rtr02; rtr01 down leaves the
    # rank writing to oss02 with a route to its OST but none to the MDS: it cannot open its
    # file, so both ranks hang (as when the MDS itself is down)
    for op in ("write", "read"):
        p = _predict(tmp_path, _ring(), "projection", f"ranks=2,op={op}", fail=("rtr01",))
        assert p.unrouted == 2 and p.aggregate_mb_s == 0.0 and p.steady_mb_s is None
    # rtr02 down: only the rank of oss02 loses its OST; the other still reaches the MDS
    p = _predict(tmp_path, _ring(), "projection", "ranks=2", fail=("rtr02",))
    assert p.unrouted == 1 and p.steady_mb_s is not None and p.steady_mb_s > 0


@pytest.mark.parametrize("op", ["write", "read"])
def test_fat_tree_without_opensm_keeps_the_io_node_port(tmp_path: Path, op: str) -> None:
    # every byte of the 4 ranks crosses io01's one 10 MB/s compute port: 10 MB/s, 2.5 each,
    # whatever OpenSM routes; the rest of the compute fabric is not simulated, so it is a bound
    p = _predict(tmp_path, FAT_TREE, "nearest-neighbor", f"ranks=4,op={op}")
    assert p.aggregate_mb_s == pytest.approx(10.0)
    assert p.rank_max_mb_s == pytest.approx(2.5)
    assert p.bottleneck is not None and p.bottleneck.kind == "fabric link"
    # named as OpenSM's traced route names that directed link
    assert p.bottleneck.name == ("cx1/L02 port 8" if op == "write" else "io01 port")
    assert p.bound and p.unmodelled and "compute fabric cib" in p.unmodelled[0]
    assert "fabric link" in p.sources


def test_unbounded_rank_does_not_void_the_prediction(tmp_path: Path) -> None:
    # only torus_link is given; two nodes per chip: nid001 shares the router's chip and
    # crosses no link (nothing bounds it), nid002 and nid003 share the 30 MB/s link into
    # chip 0 at 15 MB/s each.  IOR's figure with nid001 done at once: 3 files / (1/15 s) = 45
    p = _predict(tmp_path, _ring(False, 15, 2, ""), "projection", "ranks=3")
    assert p.aggregate_mb_s == pytest.approx(45.0)
    assert p.steady_mb_s == pytest.approx(30.0)
    assert p.rank_min_mb_s == pytest.approx(15.0) == p.rank_max_mb_s
    assert p.unbounded == 1 and p.unbounded_nodes == ("nid001",) and p.bound
    assert "1 of 3 ranks cross no resource of known rate (nid001)" in p.why_bound
    assert p.bottleneck is not None and p.bottleneck.kind == "torus link"
    # without the unbounded rank: the bounded ranks' 30 MB/s, nothing unbounded
    p = _predict(tmp_path, _ring(False, 15, 2, ""), "projection", "ranks=2,nodes=nid[002-003]")
    assert p.aggregate_mb_s == pytest.approx(30.0) and p.unbounded == 0


def test_compare_marks_every_kind_of_bound(tmp_path: Path) -> None:
    """``compare`` marked a figure "<=" only when a rate was missing: on the fat tree without
    OpenSM's routes every rate is given, yet the figure is a bound (the compute fabric is not
    modelled) -- the same figure ``analyze`` calls "at most"."""
    from click.testing import CliRunner

    from lnetgen.cli import main

    (tmp_path / "coords.csv").write_text(COORDS)
    path = tmp_path / "site.yaml"
    path.write_text(FAT_TREE)
    res = CliRunner().invoke(main, ["compare", str(path), "--workload", "ranks=4"])
    assert res.exit_code in (0, 1), res.output
    row = next(ln for ln in res.output.splitlines() if ln.startswith("nearest-neighbor"))
    assert "<=10 MB/s" in row, row
    assert (
        "<=: an upper bound, not a prediction: not modelled: the compute fabric cib" in res.output
    )
    res = CliRunner().invoke(
        main, ["compare", str(path), "--workload", "ranks=4", "--format", "json"]
    )
    rows = {r["strategy"]: r for r in json.loads(res.stdout)}
    assert rows["nearest-neighbor"]["write_bound"] is True


def test_report_says_why_a_figure_is_a_bound(tmp_path: Path) -> None:
    """The report's legend named only missing rates as the reason for "at most"."""
    from click.testing import CliRunner

    from lnetgen.cli import main

    (tmp_path / "coords.csv").write_text(COORDS)
    path = tmp_path / "site.yaml"
    path.write_text(FAT_TREE)
    out = tmp_path / "r.html"
    res = CliRunner().invoke(main, ["report", str(path), "--out", str(out)])
    assert res.exit_code in (0, 1), res.output
    assert "not modelled: the compute fabric cib" in out.read_text()
