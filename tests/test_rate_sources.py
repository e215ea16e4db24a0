"""Every rate analyze, compare and report print names where it came from -- the inventory's
``rates:`` entry with its ``source``, or the option that gave it -- and a predicted figure
whose path crosses a component without a rate is an upper bound, printed "at most" (text),
marked ``<=``/"at most" in the compare and report tables, ``bound: true`` in JSON.

The demo site (no rates) is given a full set of invented, sourced rates here; taking one out
makes the prediction a bound.  The shipped sites are checked for their legends: each names
only the site's own sources (no other machine's figure).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import ROOT

from lnetgen.analyze import CompareRow, analyze
from lnetgen.cli.analyze import analyze_cmd, format_analysis
from lnetgen.cli.compare import Rates, compare_cmd, format_compare
from lnetgen.inventory import load_site
from lnetgen.model import Site
from lnetgen.report import build_report, render_html
from lnetgen.solve import solve
from lnetgen.throughput import DEFAULT, predict
from lnetgen.throughput.sources import legend_lines, merged, site_entries, unrated
from lnetgen.traffic.settings import settings_for

SITES = ROOT / "sites"
#: Invented rates for the demo, each with a source to find in the output.
RATES = {
    "torus_link": {"x": "3000 MB/s", "y": "3000 MB/s", "z": "6000 MB/s", "source": "SRC-TORUS"},
    "injection": {"rate": "2000 MB/s", "source": "SRC-INJECTION"},
    "router": {"rate": "2500 MB/s", "source": "SRC-ROUTER"},
    "ib_link": {"rate": "3000 MB/s", "source": "SRC-IB"},
    "uplink": {"rate": "3000 MB/s", "source": "SRC-UPLINK"},
    "oss": {"rate": "1200 MB/s", "source": "SRC-OSS"},
    "ost": {"rate": "300 MB/s", "source": "SRC-OST: each OST streams 300 MB/s"},
}


#: core2's own, slower ports: a switch's rate over the site's.
CORE2 = '        rates: {ib_link: {rate: "1000 MB/s", source: "SRC-CORE2"}}\n'


@cache
def demo_with(drop: str = "", core2: bool = False) -> Path:
    """The demo site with ``RATES`` (but ``drop``; with ``core2``, core2's own ``ib_link``),
    written under a temporary directory."""
    import atexit
    import shutil
    import tempfile

    where = Path(tempfile.mkdtemp(prefix="lnetgen-rates-"))
    atexit.register(shutil.rmtree, where, True)
    rates = {k: v for k, v in RATES.items() if k != drop}
    text = (SITES / "demo.yaml").read_text()
    if core2:
        anchor = '        guid: "0x0002c90200200000"\n'
        assert text.count(anchor) == 1
        text = text.replace(anchor, anchor + CORE2)
    path = where / f"demo-{drop or 'all'}{'-core2' if core2 else ''}.yaml"
    path.write_text(text + "\n" + yaml.safe_dump({"rates": rates}))
    return path


@cache
def site_of(path: Path) -> Site:
    site, diags = load_site(str(path))[:2]
    assert not [d for d in diags if d.severity == "error"], diags
    return site


def _analyze(*args: str) -> str:
    res = CliRunner().invoke(analyze_cmd, [*args, "-q"])
    assert res.exit_code in (0, 1), res.output
    return res.stdout


# ---------------------------------------------------------------------------- analyze


def test_analyze_names_each_rate_source_in_text_and_json() -> None:
    """The OST's source is in the text's rates legend (with what uses it) and next to the flow
    rate and the bottleneck in JSON; every rate on the path carries its entry."""
    path = str(demo_with())
    text = _analyze(path)
    assert "  ost 300 MB/s: SRC-OST: each OST streams 300 MB/s [one flow, ost]" in text
    assert "oss 1200 MB/s: SRC-OSS [oss]" in text
    assert "ib_link 3000 MB/s: SRC-IB [router port (per port), server port (per port)]" in text
    assert "torus_link x 3000 MB/s, y 3000 MB/s, z 6000 MB/s: SRC-TORUS [torus link]" in text
    assert "torus_link x, y 3000 MB/s (the slowest direction): SRC-TORUS" in text
    assert "at most" not in text  # every rate on the path is known: a prediction
    data = json.loads(_analyze(path, "--format", "json"))
    assert data["settings"]["ost_source"] == "ost 300 MB/s: SRC-OST: each OST streams 300 MB/s"
    assert data["settings"]["link_source"].endswith("SRC-TORUS")
    for p in data["throughput"]:
        assert p["bound"] is False and p["unknown"] == []
        assert p["sources"]["oss"] == ["oss 1200 MB/s: SRC-OSS"]
        assert p["sources"]["router"] == ["router 2500 MB/s: SRC-ROUTER"]
        neck = p["bottleneck"]
        assert neck["source"] and neck["source"].split(": ")[1].startswith("SRC-"), neck


def test_missing_oss_rate_prints_an_upper_bound() -> None:
    """Without the OSS rate the figure is "at most", naming the missing rate; JSON says
    ``bound: true`` with the kind."""
    path = str(demo_with("oss"))
    text = _analyze(path)
    line = next(ln for ln in text.splitlines() if ln.startswith("  writes: at most"))
    assert re.match(r"  writes: at most \d+\.\d GB/s \(bound: no oss rate\) as IOR", line), line
    assert "all ranks running: at most" in line
    data = json.loads(_analyze(path, "--format", "json"))
    for p in data["throughput"]:
        assert p["aggregate_mb_s"] is not None
        assert p["bound"] is True and p["unknown"] == ["oss"]


def test_wolf_prints_at_most_and_bound() -> None:
    """Wolf gives no port, OSS or OST rate: 48.3 GB/s is what its IO nodes allow at most."""
    text = _analyze(str(SITES / "wolf.yaml"), "--workload", "nodes=random")
    assert (
        "  writes: at most 48.3 GB/s (bound: no injection, router port, server port, oss, ost "
        "rate; not modelled: the compute fabric wolf-ib beyond the IO nodes' own ports "
        "(OpenSM's routes not simulated)) as IOR reports it"
    ) in text
    assert "router 2300 MB/s: seed 002: ~55 GB/s expected from the 24 IO nodes" in text


def test_a_switch_rate_is_named_with_its_switch() -> None:
    """Ports on core2 run at core2's own rate: its entry names the switch, the site's stays
    for core1's ports, and a core2 port holding the ranks back says which it is."""
    site = site_of(demo_with(core2=True))
    p = predict(site, solve(site, "groups"), DEFAULT)
    assert p.sources["server port"] == (
        "ib_link 3000 MB/s: SRC-IB",
        "ib_link on switch core2 1000 MB/s: SRC-CORE2",
    )
    assert p.bottleneck is not None
    assert p.bottleneck.kind == "server port", p.bottleneck
    assert p.bottleneck.source == "ib_link on switch core2 1000 MB/s: SRC-CORE2"
    assert "ib_link on switch core2 1000 MB/s: SRC-CORE2" in site_entries(site)["router port"]


def test_option_values_are_labelled_with_their_option() -> None:
    """--ost-mb-s and --link-mb-s are named next to the figures they set and in the legend,
    apart from the inventory's OST rate the predictions use."""
    path = str(demo_with())
    text = _analyze(path, "--ost-mb-s", "200", "--link-mb-s", "1000")
    first = text.splitlines()[0]
    assert "one flow = one OST at 200 MB/s (--ost-mb-s)" in first, first
    assert "(1000 MB/s (--link-mb-s) / 200 MB/s (--ost-mb-s))" in text
    assert "  ost 200 MB/s: --ost-mb-s [one flow]" in text
    assert "  torus_link 1000 MB/s: --link-mb-s [a link's saturation]" in text
    assert "ost 300 MB/s: SRC-OST: each OST streams 300 MB/s [ost]" in text
    data = json.loads(_analyze(path, "--ost-mb-s", "200", "--format", "json"))
    assert data["settings"]["ost_source"] == "--ost-mb-s"


def test_site_without_rates_says_so() -> None:
    a = analyze(site_of(SITES / "demo.yaml"), solve(site_of(SITES / "demo.yaml"), "groups"))
    text = "\n".join(format_analysis(a))
    assert "rates: none (neither the site's rates: nor an option gives one)" in text
    assert "at most" not in text  # n/a, not a bound
    assert all(p.aggregate_mb_s is None and not p.bound for p in a.throughput)


# ---------------------------------------------------------------------------- compare


def test_compare_marks_bounds_and_names_sources() -> None:
    """Two bounds side by side are marked "<=", and the legend says they do not rank."""
    site = site_of(demo_with("oss"))
    rates = Rates.of(site, settings_for(site))
    oss = ("oss",)
    rows = [
        CompareRow(
            "groups", write_mb_s=14000.0, read_mb_s=14000.0, write_unknown=oss, read_unknown=oss
        ),
        CompareRow("baseline", write_mb_s=12000.0, read_mb_s=None, write_unknown=oss),
        CompareRow("projection", write_mb_s=9000.0, read_mb_s=9000.0),  # crossed no unrated kind
    ]
    text = "\n".join(format_compare(rows, rates))
    assert " <=14.0 GB/s <=14.0 GB/s " in text and " <=12.0 GB/s         n/a " in text
    assert "   9.0 GB/s    9.0 GB/s " in text  # bounds are per row, not per site
    assert "<=: an upper bound, not a prediction: the site gives no oss rate" in text
    assert "does not rank the strategies" in text
    assert "ost 300 MB/s: SRC-OST: each OST streams 300 MB/s [one flow, ost]" in text
    row = rates.row(rows[1])
    assert row["write_bound"] is True and row["read_bound"] is False
    assert row["unknown"] == ["oss"]
    assert row["sources"]["router"] == ["router 2500 MB/s: SRC-ROUTER"]
    assert row["flow_rates"]["ost"]["source"].startswith("ost 300 MB/s: SRC-OST")


def test_compare_json_carries_bound() -> None:
    res = CliRunner().invoke(
        compare_cmd, [str(demo_with("oss")), "--strategies", "groups", "-q", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    [row] = json.loads(res.stdout)
    assert row["write_mb_s"] is not None and row["write_bound"] is True
    assert row["unknown"] == ["oss"]


def test_compare_without_bounds_is_unmarked() -> None:
    site = site_of(demo_with())
    rows = [CompareRow("groups", write_mb_s=14000.0, read_mb_s=14000.0)]
    text = "\n".join(format_compare(rows, Rates.of(site, settings_for(site))))
    assert "<=" not in text and "  14.0 GB/s  14.0 GB/s " in text


# ---------------------------------------------------------------------------- report


def test_report_names_sources_and_marks_bounds() -> None:
    full = render_html(build_report(site_of(demo_with()), ["groups"]))
    assert "<li>ost 300 MB/s: SRC-OST: each OST streams 300 MB/s [one flow, ost]</li>" in full
    assert "<li>oss 1200 MB/s: SRC-OSS [oss]</li>" in full
    assert "predicted write / read: the workload" in full
    assert "at most" not in full
    bound = render_html(build_report(site_of(demo_with("oss")), ["groups"]))
    cell = re.search(r'<td class="num">(at most [0-9.]+ / [0-9.]+ GB/s)</td>', bound)
    assert cell is not None
    assert "the path crosses oss, whose rates the site does not give" in bound


def test_report_labels_option_values() -> None:
    site = site_of(demo_with())
    settings = settings_for(site, None, 200.0)
    html = render_html(build_report(site, ["groups"], settings=settings, workload=None))
    assert "one flow = one OST at 200 MB/s (--ost-mb-s)" in html
    assert "<li>ost 200 MB/s: --ost-mb-s [one flow]</li>" in html


# ---------------------------------------------------------------------------- shipped sites


def _own_sources(path: Path) -> set[str]:
    doc = yaml.safe_load(path.read_text())
    out = {" ".join(str(v["source"]).split()) for v in (doc.get("rates") or {}).values()}
    for fabric in doc.get("fabrics") or []:
        for sw in fabric.get("switches") or []:
            out |= {" ".join(str(v["source"]).split()) for v in (sw.get("rates") or {}).values()}
    return out


@pytest.mark.parametrize("name", ["demo", "wolf", "slingshot", "spider", "bluewaters"])
def test_shipped_sites_legend_is_their_own(name: str) -> None:
    """Every entry a shipped site's predictions and legends name is one of its own sources,
    and the kinds a compare table calls unrated cover what the prediction found missing."""
    path = SITES / f"{name}.yaml"
    site = site_of(path)
    own = _own_sources(path)
    p = predict(site, solve(site, site.strategy.default), DEFAULT)
    s = settings_for(site)
    entries = [e for es in p.sources.values() for e in es]
    entries += [e for es in site_entries(site).values() for e in es]
    entries += [e for e in (s.ost_source, s.link_source) if e]
    if p.bottleneck is not None:
        entries.append(p.bottleneck.source)
    for e in entries:
        assert e.split(": ", 1)[1] in own, (name, e)
    assert set(p.unknown) <= set(unrated(site))
    assert p.bound == (p.aggregate_mb_s is not None and bool(p.unknown))
    expected = {"demo": False, "wolf": True, "slingshot": True, "spider": True}
    assert p.bound == expected.get(name, True)  # Blue Waters: no port or OST rate


def test_merged_sources_and_legend_lines_are_shared_by_analyze_and_report() -> None:
    """Several predictions' sources merge per kind in the order first met, each entry once;
    the legend's lines carry the entry, then [what uses it] -- the one text analyze and the
    report print."""
    got = merged([{"oss": ("oss A",), "ost": ("ost B",)}, {"oss": ("oss C", "oss A")}])
    assert got == [("oss", ("oss A", "oss C")), ("ost", ("ost B",))]
    lines = legend_lines(None, [("oss", ("oss A",)), ("router", ("oss A",)), ("ost", ("o",))])
    assert lines == ["oss A [oss, router]", "o [ost]"]
