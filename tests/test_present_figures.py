"""How analyze, compare and report present their figures on small sites:

* a bandwidth below 1 GB/s is printed in MB/s, never as "0.0 GB/s" (which read like a run
  that hangs); figures from 1 GB/s are printed as before;
* the report says "saturation n/a" without an OST rate, as analyze does, not "0 link(s)
  above saturation (n/a)";
* torus link counts, means and percentiles take no slot along a dimension of size 1 (an
  8x1x1 torus has 16 directed links, not 48), and along one of size 2 only the ``+`` slots,
  the ones its routing takes;
* ``--opensm recorded`` on a site that records no OpenSM settings says none are recorded.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lnetgen import topology
from lnetgen.api import load_plan
from lnetgen.cli.analyze import analyze_cmd
from lnetgen.cli.compare import compare_cmd
from lnetgen.report import build_report
from lnetgen.throughput import parse_inline

ROOT = Path(__file__).resolve().parent.parent

TINY = """\
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
  torus_link: {x: "LINK", y: "LINK", z: "LINK", source: "test: round number"}
  router: {rate: "2 GB/s", source: "test router"}
  ib_link: {rate: "10 GB/s", source: "test ib"}
  oss: {rate: "OSS", source: "test oss"}
  ost: {rate: "1 GB/s", source: "test ost"}
fabrics:
  - name: stor
    role: storage
    switches:
      - {name: tor1, kind: tor, ports: 12, guid: "0x0002c90200200000"}
      - {name: tor2, kind: tor, ports: 12, guid: "0x0002c90200300000"}
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
  - {name: oss1, role: oss, fs: fs1, ip: 10.0.1.1, interface: ib0, guid: "0x0002c90300b00001", attach: {switch: tor1, port: 2}, osts: "0-1"}
  - {name: oss2, role: oss, fs: fs1, ip: 10.0.1.2, interface: ib0, guid: "0x0002c90300b00002", attach: {switch: tor2, port: 2}, osts: "2-3"}
  - {name: mds1, role: mds, fs: fs1, ip: 10.0.2.1, interface: ib0, guid: "0x0002c90300c00001", attach: {switch: tor1, port: 3}}
"""  # noqa: E501

COORDS = "node,x,y,z\n" + "".join(
    f"nid00{i},{x},0,0\n" for i, x in zip(range(1, 9), (1, 1, 5, 5, 2, 6, 3, 7), strict=True)
)

#: Two ranks on nid001 and nid005 over OSTs 0-1: both cross the 30 MB/s link (1,0,0)X-.
SLOW_WORKLOAD = 'ranks: 2\nnodes: "nid[001,005]"\nosts: 0-1\n'


def tiny(tmp_path: Path, link: str = "1 GB/s", oss: str = "1.5 GB/s", ost: bool = True) -> str:
    """The 8x1x1 tiny site in ``tmp_path`` with the rates given (no OST rate: ``ost``
    False); its path."""
    text = TINY.replace("LINK", link).replace("OSS", oss)
    if not ost:
        text = text.replace('  ost: {rate: "1 GB/s", source: "test ost"}\n', "")
    (tmp_path / "coords.csv").write_text(COORDS)
    path = tmp_path / "tiny.yaml"
    path.write_text(text)
    return str(path)


def slow(tmp_path: Path) -> tuple[str, str]:
    """The reviewers' site whose hand answer is 30 MB/s, and its workload file."""
    site = tiny(tmp_path, link="30 MB/s", oss="100 MB/s")
    work = tmp_path / "w.yaml"
    work.write_text(SLOW_WORKLOAD)
    return site, str(work)


# ----------------------------------------------------------------------------- figures


@pytest.mark.parametrize(
    ("mb_s", "text"),
    [
        (None, "n/a"),
        (0.0, "0 GB/s"),
        (0.042, "0.042 MB/s"),
        (2.5, "2.5 MB/s"),
        (30.0, "30 MB/s"),
        (999.4, "999 MB/s"),
        (999.5, "1.0 GB/s"),
        (1000.0, "1.0 GB/s"),
        (48_300.0, "48.3 GB/s"),
        (154_285.7, "154.3 GB/s"),
    ],
)
def test_rate_text(mb_s: float | None, text: str) -> None:
    from lnetgen.analyze.units import rate

    assert rate(mb_s) == text


def test_no_nonzero_rate_prints_as_zero() -> None:
    from lnetgen.analyze.units import rate

    for mb_s in np.geomspace(1e-6, 1e7, 400).tolist():
        number, unit = rate(mb_s).split()
        assert float(number) > 0, (mb_s, rate(mb_s))
        assert unit in ("MB/s", "GB/s")
        shown = float(number) * (1000 if unit == "GB/s" else 1)
        assert abs(shown - mb_s) <= 0.06 * mb_s, (mb_s, rate(mb_s))  # two digits at least


@pytest.mark.parametrize(
    ("mb_s", "text"),
    [(714.29, "714.3"), (15.0, "15.0"), (0.05, "0.1"), (0.042, "0.042"), (0, "0.0")],
)
def test_per_rank_digits(mb_s: float, text: str) -> None:
    """Per-rank figures keep their one decimal, more where it would show 0.0."""
    from lnetgen.analyze.units import mb_s_digits

    assert mb_s_digits(mb_s) == text


def test_analyze_prints_mb_s_below_one_gb_s(tmp_path: Path) -> None:
    site, work = slow(tmp_path)
    res = CliRunner().invoke(analyze_cmd, [site, "--workload", work])
    assert res.exit_code == 0, res.output
    assert "writes: at most 30 MB/s (bound: no injection rate)" in res.output
    assert "(all ranks running: at most 30 MB/s;" in res.output
    assert "oss 100 MB/s" in res.output  # capacity on the path
    assert not re.search(r"(?<![0-9])0\.[01] GB/s", res.output), res.output


def test_analyze_keeps_gb_s_figures(tmp_path: Path) -> None:
    res = CliRunner().invoke(analyze_cmd, [tiny(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "writes: at most 3.0 GB/s (bound: no injection rate)" in res.output


def test_compare_prints_mb_s_below_one_gb_s(tmp_path: Path) -> None:
    site, work = slow(tmp_path)
    res = CliRunner().invoke(compare_cmd, [site, "--workload", work])
    assert res.exit_code in (0, 1), res.output
    row = next(line for line in res.output.splitlines() if line.startswith("projection"))
    assert row.count("<=30 MB/s") == 2, row
    assert not re.search(r"(?<![0-9])0\.0 GB/s", res.output), res.output


def test_report_prints_mb_s_below_one_gb_s(tmp_path: Path) -> None:
    site, work = slow(tmp_path)
    s, _plan, warnings = load_plan(site, None, None)
    from lnetgen.throughput import load_workload

    rep = build_report(s, ["projection"], warnings, workload=load_workload(work))
    row = rep.summary.rows[0]
    assert "at most 30 MB/s / 30 MB/s" in row, row
    assert not any(re.search(r"(?<![0-9])0\.0 .*GB/s", cell) for cell in row), row


def test_report_keeps_gb_s_figures(tmp_path: Path) -> None:
    s, _plan, warnings = load_plan(tiny(tmp_path), None, None)
    rep = build_report(s, ["projection"], warnings)
    assert "at most 3.0 / 3.0 GB/s" in rep.summary.rows[0]


# ----------------------------------------------------------------------------- saturation


def test_report_says_saturation_na_without_an_ost_rate(tmp_path: Path) -> None:
    s, _plan, warnings = load_plan(tiny(tmp_path, ost=False), None, None)
    rep = build_report(s, ["projection"], warnings, workload=parse_inline("ranks=4"))
    heads = [p.headline for v in rep.views for p in v.torus]
    assert len(heads) == 2
    for h in heads:
        assert "saturation n/a" in h, h
        assert "link(s) above saturation" not in h, h


# ----------------------------------------------------------------------------- torus links


def test_real_links_by_hand() -> None:
    assert int(topology.real_links([8, 1, 1]).sum()) == 16  # X+ and X- at 8 positions
    assert int(topology.real_links([2, 3, 1]).sum()) == 6 + 12  # size 2: one pair; 3: both
    assert int(topology.real_links([1, 1, 1]).sum()) == 0
    assert int(topology.real_links([4, 4, 4]).sum()) == 64 * 6


@pytest.mark.parametrize("dims", [(2, 1, 3), (8, 1, 1), (2, 2, 2), (1, 3, 4)])
@pytest.mark.parametrize("mode", topology.ROUTING_MODES)
def test_routing_uses_only_real_links(dims: tuple[int, int, int], mode: str) -> None:
    """Every flow between every pair of chips stays on the links ``real_links`` counts."""
    chips = np.asarray(list(itertools.product(*(range(n) for n in dims))), dtype=np.int64)
    src = np.repeat(chips, len(chips), axis=0)
    dst = np.tile(chips, (len(chips), 1))
    loads = topology.link_loads(src, dst, dims, mode)
    assert not loads[~topology.real_links(dims)].any()


def test_analyze_counts_real_torus_links(tmp_path: Path) -> None:
    res = CliRunner().invoke(analyze_cmd, [tiny(tmp_path), "--format", "json"])
    assert res.exit_code == 0, res.output
    torus = json.loads(res.output)["torus"]
    for phase in ("writes", "reads"):
        st = torus[phase]
        assert st["links"] == 16, st  # was 48: the Y and Z slots of an 8x1x1 torus
        assert st["used"] == 12
        assert st["mean"] == pytest.approx(st["volume"] / 16, abs=1e-3)  # was 0.167
    text = CliRunner().invoke(analyze_cmd, [tiny(tmp_path)]).output
    assert "12 of 16 links used" in text and "mean 0.500" in text


def test_report_counts_real_torus_links(tmp_path: Path) -> None:
    s, _plan, warnings = load_plan(tiny(tmp_path), None, None)
    rep = build_report(s, ["projection"], warnings)
    for p in rep.views[0].torus:
        assert "of 16 links carry traffic" in p.headline, p.headline


# ----------------------------------------------------------------------------- OpenSM


def test_opensm_recorded_without_recorded_settings_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--opensm recorded`` on a site that records no OpenSM settings: "none recorded";
    wolf, which records them for its compute fabric, keeps "recorded"."""
    import lnetgen.cli.analyze as cli
    from lnetgen.api import load_plan as lp
    from lnetgen.throughput import DEFAULT
    from lnetgen.throughput.fabric import FabricRoutes

    def fake(site: object, settings: str | None, spec: object) -> tuple[FabricRoutes, None]:
        return FabricRoutes("cib", str(settings), {}), None

    monkeypatch.setattr(cli, "opensm_routes", fake)
    demo, _p, _w = lp(str(ROOT / "sites" / "demo.yaml"), None, None)
    assert all(f.opensm is None for f in demo.fabrics)
    compute, _ = cli.opensm_routes_said(demo, "recorded", DEFAULT)
    assert compute is not None and compute.settings == cli.NONE_RECORDED
    compute, _ = cli.opensm_routes_said(demo, "none", DEFAULT)
    assert compute is not None and compute.settings == "none"
    wolf, _p, _w = lp(str(ROOT / "sites" / "wolf.yaml"), None, None)
    wolf_fabric = next(f.name for f in wolf.fabrics if f.opensm is not None)

    def fake_wolf(site: object, settings: str | None, spec: object) -> tuple[FabricRoutes, None]:
        return FabricRoutes(wolf_fabric, str(settings), {}), None

    monkeypatch.setattr(cli, "opensm_routes", fake_wolf)
    compute, _ = cli.opensm_routes_said(wolf, "recorded", DEFAULT)
    assert compute is not None and compute.settings == "recorded"
