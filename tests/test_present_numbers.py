"""Figures as printed: the report's switch box counts the flows that cross its spine (it
printed an uplink load, more flows than there were), and counts of flows read with two
decimals (``3.33``, not ``3.33333``) in analyze and compare."""

from __future__ import annotations

import dataclasses
import re
from functools import cache
from pathlib import Path

import pytest

from lnetgen import report
from lnetgen.analyze import Analysis, analyze, compare
from lnetgen.analyze.failures import WorstFailure
from lnetgen.cli.analyze import _load_lines
from lnetgen.cli.compare import Rates, format_compare
from lnetgen.inventory import load_site
from lnetgen.model import Site
from lnetgen.solve import solve

SITES = Path(__file__).resolve().parent.parent / "sites"


@cache
def _site(name: str) -> Site:
    site = load_site(str(SITES / f"{name}.yaml"))[0]
    assert site is not None
    return site


# ---------------------------------------------------------------- the switch box's figure


def test_switch_box_counts_the_headlines_crossing_flows() -> None:
    """Slingshot has one storage director.  Baseline: 87.5 % of 112 flows cross its spine
    (98.0); the box printed 112.0 (a sum of per-leaf max(up, down) uplink loads) under
    "flows cross"."""
    site = _site("slingshot")
    (fabric,) = [f for f in site.fabrics if f.role == "storage"]
    assert len(fabric.switches) == 1
    html = report.html_report(site, ["baseline"], (), max_slices=0)
    a = analyze(site, solve(site, "baseline"), with_n_minus_1=False, throughput=None)
    fw, fr = a.fabric.writes, a.fabric.reads
    assert fw.crossing == pytest.approx(98.0) and fw.served == pytest.approx(112.0)
    notes = re.findall(r"spine: ([0-9.]+) of ([0-9.]+) write, ([0-9.]+) of ([0-9.]+) read", html)
    assert notes == [("98.0", "112.0", f"{fr.crossing:.1f}", f"{fr.served:.1f}")]
    assert "flows cross" in html


def test_switch_figures_add_up_to_the_crossing_plus_the_flows_between_switches() -> None:
    """Demo baseline, two directors: a flow between them crosses both spines, so the
    switches' figures add up to the crossing flows plus the flows between switches."""
    site = _site("demo")
    a = analyze(site, solve(site, "baseline"), with_n_minus_1=False, throughput=None)
    for ph in (a.fabric.writes, a.fabric.reads):
        by = {c.switch: c.flows for c in ph.switches}
        assert set(by) == {"core1", "core2"}
        assert sum(by.values()) == pytest.approx(ph.crossing + ph.inter_switch)
        assert all(0 < v <= ph.crossing for v in by.values())


def test_switch_with_nothing_crossing_says_so() -> None:
    site = _site("slingshot")
    html = report.html_report(site, ["round-robin"], (), max_slices=0)
    assert "director; nothing crosses the spine" in html


# ---------------------------------------------------------------- two decimals


def test_flows_text() -> None:
    from lnetgen.analyze.units import flows

    assert [flows(x) for x in (10 / 3, 4.0, 0.0, 12.0000001, 4.5, float("inf"))] == [
        "3.33",
        "4",
        "0",
        "12",
        "4.50",
        "n/a",
    ]


def _with_loads(a: Analysis, lost: float, down: float, most: float) -> Analysis:
    w = WorstFailure("router", "rtr01", "rtr02", 10 / 3, 10 / 3, lost, most, "trt01", down)
    return dataclasses.replace(a, failure_loads=(w,))


def test_analyze_prints_flows_without_a_route_to_two_decimals() -> None:
    """Reviewer F: ``3.33333 flows without a route``, ``most without a route: 1.33333``."""
    site = _site("demo")
    a = analyze(site, solve(site, "projection"), with_n_minus_1=False, throughput=None)
    (line,) = _load_lines(_with_loads(a, 10 / 3, 14 / 3, 13 / 3))
    assert "3.33 flows without a route" in line
    assert "4.67 lost with their servers" in line
    assert "most without a route: 4.33 (trt01)" in line
    assert not re.search(r"\d\.\d{3}", line), line


def test_compare_fail_column_to_two_decimals() -> None:
    """Reviewer F: compare's fail load/lost column read ``1.00x/3.33333``."""
    site = _site("demo")
    (row,) = compare(site, ["projection"], uniform_torus=False)
    text = "\n".join(format_compare([dataclasses.replace(row, failure_lost=10 / 3)], Rates()))
    assert "1.00x/3.33 " in text and "3.333" not in text
    text = "\n".join(format_compare([dataclasses.replace(row, failure_lost=4.0)], Rates()))
    assert "1.00x/4 " in text  # a whole count stays whole, as documented
