"""The HTML report on a dragonfly client side (a reviewer's journey on a Slingshot site): the
page shows, per layout, the traffic split ``lnetgen analyze`` and ``lnetgen compare`` print --
the share of writes and reads on the client's switch, in its group and across a global link,
and the busiest pair of groups -- with the same figures and words, as a table and one stacked
bar per layout and direction; nothing of it on a site without a dragonfly.
"""

from __future__ import annotations

import html as htmllib
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_report import ROOT, SITES, check_html, demo_html, demo_report, parse_svgs, site

from lnetgen import report
from lnetgen.cli import main
from lnetgen.inventory import load_site
from lnetgen.model import Site
from lnetgen.solve import solve, strategy_names

SLINGSHOT = str(SITES / "slingshot.yaml")
PLOT_WIDTH = 560  # lnetgen.report.dragonfly: the bars' 100 %

_ANALYZE = re.compile(
    r"^\s*(writes|reads)\s+\((client -> router|router -> client)\): ([\d.]+ %) on the client's "
    r"switch, ([\d.]+ %) in its group, ([\d.]+ %) across a global link"
    r"(?:; busiest group pair (\S+): ([\d.]+) flows)?$",
    re.M,
)


@cache
def slingshot_report(compare: bool = False) -> report.Report:
    s, warnings = load_site(SLINGSHOT)
    return report.build_report(s, strategy_names() if compare else ["nearest-neighbor"], warnings)


def page_text(html: str) -> str:
    """The page as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", html)).split())


def analyze_rows(name: str) -> list[tuple[str, ...]]:
    """The dragonfly figures ``lnetgen analyze`` prints for ``name``, as report table rows."""
    res = CliRunner().invoke(main, ["analyze", SLINGSHOT, "-s", name])
    assert res.exit_code in (0, 1), res.output
    rows = []
    for m in _ANALYZE.finditer(res.output):
        op, way, sw, grp, glob, pair, flows = m.groups()
        rows.append((name, f"{op} ({way})", sw, grp, glob, f"{pair}: {flows} flows"))
    assert len(rows) == 2, res.output
    return rows


def test_single_report_shows_the_dragonfly_split_analyze_prints() -> None:
    rep = slingshot_report()
    html = report.render_html(rep)
    check_html(html)
    assert rep.dragonfly is not None
    expected = analyze_rows("nearest-neighbor")
    assert list(rep.dragonfly.table.rows) == expected
    text = page_text(html)
    assert (
        "dragonfly 8 groups x 16 switches, 32 global links per pair of groups (client <-> "
        "router flows, minimal routes)" in text
    )
    for row in expected:
        assert " ".join(row) in text, row
    assert 'href="#dragonfly"' in html and 'id="dragonfly"' in html
    # the summary carries the global-link shares, writes / reads
    head = rep.summary.head
    col = head.index("across a global link w / r")
    assert rep.summary.rows[0][col] == f"{expected[0][4]} / {expected[1][4]}"
    assert ("dragonfly", "8 groups x 16 switches, 32 global links per pair of groups") in (
        rep.facts
    )


def test_compare_report_shows_every_layouts_split() -> None:
    """Per layout, the figures of ``lnetgen compare`` and of ``analyze`` (both
    directions); nearest-neighbor keeps half the writes off the global links, the others not."""
    rep = slingshot_report(True)
    html = report.render_html(rep)
    check_html(html)
    assert rep.dragonfly is not None
    rows = {(r[0], r[1]): r for r in rep.dragonfly.table.rows}
    assert len(rows) == 2 * len(strategy_names())
    res = CliRunner().invoke(main, ["compare", SLINGSHOT])
    assert res.exit_code in (0, 1), res.output
    table = res.output.split("\ndragonfly ", 1)[1].splitlines()[1:]
    compared = {
        (ln.split()[0], ln.split()[1]): ln.split()[2:]
        for ln in table
        if ln.split() and ln.split()[0] in strategy_names()
    }
    assert len(compared) == 2 * len(strategy_names())
    for (name, way), cells in compared.items():
        sw, grp, glob = (f"{cells[i]} %" for i in (0, 2, 4))
        pair, flows = cells[6], cells[7]
        label = "writes (client -> router)" if way == "writes" else "reads (router -> client)"
        assert rows[(name, label)][2:] == (sw, grp, glob, f"{pair}: {flows} flows"), name
    for row in analyze_rows("nearest-neighbor"):
        assert rows[row[:2]] == row
    globals_ = {n: rows[(n, "writes (client -> router)")][4] for n in strategy_names()}
    assert globals_["nearest-neighbor"] == "50.0 %"
    assert all(v == "87.5 %" for n, v in globals_.items() if n != "nearest-neighbor")


def test_the_bars_are_the_shares() -> None:
    """Each bar is 100 % of one direction's flows: its segments are the three shares, in the
    same order for every layout, their widths adding up to the whole plot."""
    rep = slingshot_report(True)
    assert rep.dragonfly is not None
    fig = rep.dragonfly.figure
    segs = [
        i
        for i in fig.svg.items
        if isinstance(i, report.Rect) and i.cls in ("d-sw", "d-grp", "d-glob") and i.title
    ]
    bars: dict[float, list[report.Rect]] = {}
    for r in segs:
        bars.setdefault(r.y, []).append(r)
    assert len(bars) == 2 * len(strategy_names())
    table = rep.dragonfly.table.rows
    for (y, parts), row in zip(sorted(bars.items()), table, strict=True):
        assert [p.cls for p in parts] == ["d-sw", "d-grp", "d-glob"], y
        assert sum(p.w for p in parts) == pytest.approx(PLOT_WIDTH, abs=0.5)
        for p, share in zip(parts, row[2:5], strict=True):
            assert p.w == pytest.approx(PLOT_WIDTH * float(share[:-2]) / 100, abs=0.6)
            assert p.title.startswith(f"{row[0]} {row[1]}: {share} ")
    svgs = parse_svgs(report.render_html(rep))
    assert any(e.get("aria-label", "").startswith("dragonfly flows") for e in svgs)


def test_unsolvable_layout_is_a_row_as_wide_as_the_head(monkeypatch: pytest.MonkeyPatch) -> None:
    """A layout that cannot be solved: a summary row with every cell (it was one short, so the
    page's table lost its last cell) and a row in the dragonfly table saying so."""
    from lnetgen.strategies.base import solve_error

    s, _ = load_site(SLINGSHOT)
    real = solve

    def fake(site_: Site, name: str | None = None) -> object:
        if name == "round-robin":
            raise solve_error(site_, "E-TEST", "cannot solve this")
        return real(site_, name)

    monkeypatch.setattr("lnetgen.solve.solve", fake)
    rep = report.build_report(s, ["round-robin", "nearest-neighbor"])
    assert all(len(r) == len(rep.summary.head) for r in rep.summary.rows)
    assert rep.dragonfly is not None
    assert rep.dragonfly.table.rows[0][:2] == ("round-robin", "not solvable")
    html = report.render_html(rep)
    check_html(html)
    assert html.count("<td") == html.count("</td>")


def test_summary_rows_as_wide_as_the_head_without_a_dragonfly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lnetgen.strategies.base import solve_error

    s = site("wolf")
    real = solve

    def fake(site_: Site, name: str | None = None) -> object:
        if name == "round-robin":
            raise solve_error(site_, "E-TEST", "cannot solve this")
        return real(site_, name)

    monkeypatch.setattr("lnetgen.solve.solve", fake)
    rep = report.build_report(s, ["round-robin", "groups"])
    assert all(len(r) == len(rep.summary.head) for r in rep.summary.rows)


@pytest.mark.parametrize("name", ["demo", "wolf"])
def test_nothing_of_it_without_a_dragonfly(name: str) -> None:
    if name == "demo":
        rep, html = demo_report(True), demo_html(True)
    else:
        rep = report.build_report(site("wolf"), ["groups"])
        html = report.render_html(rep)
    assert rep.dragonfly is None
    assert 'id="dragonfly"' not in html and "#dragonfly" not in html
    assert "across a global link" not in html
    assert all("dragonfly" not in k for k, _ in rep.facts)


def test_dragonfly_report_is_deterministic_across_hash_seeds(tmp_path: Path) -> None:
    outs = []
    for seed in ("0", "4242"):
        out = tmp_path / f"r{seed}.html"
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        code = "import sys; from lnetgen.cli.report import command; command(sys.argv[1:])"
        args = [SLINGSHOT, "-s", "nearest-neighbor"]
        proc = subprocess.run(
            [sys.executable, "-c", code, *args, "-q", "--out", str(out)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert b'id="dragonfly"' in outs[0]
