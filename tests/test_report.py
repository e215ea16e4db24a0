"""The HTML report: well-formed HTML and SVG, escaping, caps, agreement with ``analyze``,
determinism, the CLI, and -- marked ``integration`` -- a screenshot in headless Chromium.

Chromium (Debian's ``chromium`` package) is installed with apt-get when missing; the screenshot
test skips, saying why, when that is not possible (not root, no apt-get, or the install fails).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lnetgen import report
from lnetgen.analyze import analyze, index_plan
from lnetgen.cli.report import command
from lnetgen.inventory import load_site
from lnetgen.model import Site
from lnetgen.solve import solve, strategy_names

ROOT = Path(__file__).resolve().parent.parent
SITES = ROOT / "sites"
DEMO = str(SITES / "demo.yaml")
HOSTILE = "<script>alert('x')</script>&amp;\"quoted\"</svg><b onmouseover=x>"


@cache
def site(name: str) -> Site:
    return load_site(str(SITES / f"{name}.yaml"))[0]


@cache
def demo_report(compare: bool = False) -> report.Report:
    s, warnings = load_site(DEMO)
    names = strategy_names() if compare else ["groups"]
    return report.build_report(s, names, warnings)


@cache
def demo_html(compare: bool = False) -> str:
    return report.render_html(demo_report(compare))


@cache
def spider_html() -> str:
    s, warnings = load_site(str(SITES / "spider.yaml"))
    return report.html_report(s, ["baseline"], warnings, max_slices=2, max_switches=1)


# ----------------------------------------------------------------------------- helpers

_VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}


class _Checker(HTMLParser):
    """Tag balance (void elements and self-closed SVG elements aside), and what is forbidden in
    a self-contained report."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"event handler {name} on <{tag}>")
            if name in ("src", "href") and value and not value.startswith("#"):
                self.problems.append(f"external reference {name}={value!r}")
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()


def check_html(html: str) -> _Checker:
    assert html.startswith("<!DOCTYPE html>")
    chk = _Checker()
    chk.feed(html)
    chk.close()
    assert not chk.problems, chk.problems[:5]
    assert not chk.stack, chk.stack
    assert "script" not in chk.tags
    assert "url(" not in html and "@import" not in html
    return chk


def svg_blocks(html: str) -> list[str]:
    return re.findall(r"<svg\b.*?</svg>", html, flags=re.S)


def parse_svgs(html: str) -> list[ET.Element]:
    blocks = svg_blocks(html)
    assert blocks
    assert html.count("<svg") == len(blocks)
    return [ET.fromstring(b) for b in blocks]  # raises on malformed XML


def texts(el: ET.Element) -> str:
    return "".join(el.itertext())


# ----------------------------------------------------------------------------- demo


def test_demo_html_and_svg_are_well_formed() -> None:
    html = demo_html()
    check_html(html)
    svgs = parse_svgs(html)
    # legend, one fabric, 2 x (overview + 4 slices), heat legend, 2 histograms, N-1 chart
    assert len(svgs) == 1 + 1 + 10 + 1 + 2 + 1
    for el in svgs:
        assert el.tag == "{http://www.w3.org/2000/svg}svg"
        assert float(el.get("width", "0")) > 0 and float(el.get("height", "0")) > 0


def test_demo_report_shows_every_host_and_router_chip() -> None:
    html = demo_html()
    s = site("demo")
    for r in s.routers:
        assert f"router {r.name} at {r.attach.label()} port {r.attach.port}" in html
    for sv in s.servers:
        assert f" {sv.name} ({sv.fs}) at {sv.attach.label()} port {sv.attach.port}" in html
    # every router is ringed on its own z-slice (demo: 4 slices, all drawn)
    rings = re.findall(r'class="rtr"><title>([^<]*) at x=(\d+) y=(\d+) z=(\d+)</title>', html)
    placed = {n for names, *_ in rings for n in names.split(", ")}
    assert placed == {r.name for r in s.routers}
    for names, x, y, z in rings:
        for n in names.split(", "):
            assert s.router(n).coords == (int(x), int(y), int(z))


def test_compare_report_has_every_strategy_on_shared_scales() -> None:
    rep = demo_report(True)
    html = demo_html(True)
    check_html(html)
    parse_svgs(html)
    assert [v.strategy for v in rep.views] == strategy_names()
    assert [row[0] for row in rep.summary.rows] == strategy_names()
    # histograms share their axes: same tick labels in every strategy's chart
    ticks = {
        tuple(t.text for t in v.link_hist.svg.items if isinstance(t, report.Text))
        for v in rep.views
        if v.link_hist is not None
    }
    assert len(ticks) == 1
    # baseline crosses the spine (red bars), the fine-grained layouts do not
    for v in rep.views:
        risers = [i for fv in v.fabrics if fv.svg for i in fv.svg.items if i.cls == "riser"]
        assert bool(risers) == (v.strategy == "baseline"), v.strategy


def test_link_loads_and_router_load_agree_with_analyze() -> None:
    s = site("demo")
    for name in ("groups", "nearest-neighbor", "baseline"):
        plan = solve(s, name)
        ix = index_plan(s, plan)
        a = analyze(s, plan, index=ix)
        assert a.torus is not None
        loads = report.link_load_arrays(ix)
        assert loads is not None
        w, r = loads
        assert w.shape == (4, 4, 4, 6) and r.shape == (4, 4, 4, 6)
        assert w.max() == pytest.approx(a.torus.writes.max, abs=1e-6)
        assert r.max() == pytest.approx(a.torus.reads.max, abs=1e-6)
        assert w.sum() == pytest.approx(a.torus.writes.volume, abs=1e-4)
        assert r.sum() == pytest.approx(a.torus.reads.volume, abs=1e-4)
        assert int((w > 0).sum()) == a.torus.writes.used
        served = report.clients_per_router(ix)
        assert served.tolist() == [u.clients for u in a.torus.routers]


def test_caps_summarize_what_is_not_drawn() -> None:
    s, _ = load_site(DEMO)
    rep = report.build_report(s, ["baseline"], max_switches=1, max_slices=1)
    (view,) = rep.views
    (fab,) = view.fabrics
    assert fab.svg is not None
    names = [t.text for t in fab.svg.items if isinstance(t, report.Text) and t.cls == "sw-name"]
    assert names == ["core2"]  # the busiest switch (more spine crossing) is drawn first
    assert fab.notes and fab.notes[0].startswith("1 more switch(es) not drawn (core1)")
    for ph in view.torus:
        assert len(ph.maps) == 2  # max-over-z overview + the one most loaded slice
        assert "showing the 1 most loaded of 4 z-slices" in ph.headline


def test_site_without_torus() -> None:
    s, warnings = load_site(str(SITES / "wolf.yaml"))
    rep = report.build_report(s, ["groups"], warnings)
    html = report.render_html(rep)
    check_html(html)
    parse_svgs(html)
    assert rep.heat_legend is None and rep.views[0].torus == () and rep.views[0].link_hist is None
    assert 'id="torus"' not in html
    assert "Compute fabric wolf-ib (the client side) is not drawn." in html


def test_unsolvable_strategy_is_a_row_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    from lnetgen.strategies import SolveError
    from lnetgen.strategies.base import solve_error

    s = site("demo")
    real = solve

    def fake(site_: Site, name: str | None = None) -> object:
        if name == "round-robin":
            raise solve_error(site_, "E-TEST", "cannot <solve> this")
        return real(site_, name)

    monkeypatch.setattr("lnetgen.solve.solve", fake)
    assert issubclass(SolveError, Exception)
    rep = report.build_report(s, ["round-robin", "groups"])
    html = report.render_html(rep)
    check_html(html)
    assert rep.views[0].error == "cannot <solve> this"
    assert "not solvable: cannot &lt;solve&gt; this" in html


# ----------------------------------------------------------------------------- escaping


def test_svg_escapes_text_titles_and_labels() -> None:
    svg = report.Svg(
        100,
        50,
        HOSTILE,
        (
            report.Text(1, 2, HOSTILE, "legend"),
            report.Rect(0, 0, 10, 10, "h1", HOSTILE),
            report.Circle(5, 5, 2, "rtr", HOSTILE),
            report.Poly(((0, 0), (1, 1), (0, 1)), "n0", HOSTILE),
        ),
    )
    out = str(report.render_svg(svg))
    assert "<script" not in out and "<b " not in out
    el = ET.fromstring(out)
    assert el.get("aria-label") == HOSTILE
    assert texts(el).count(HOSTILE) == 4


def test_report_escapes_every_inventory_string() -> None:
    """Validation forbids '<' in names, so the hostile strings are put into the report data
    directly, where inventory names end up: site, description, facts, strategy, net and host
    titles in the pictures, warnings and findings."""
    rep = demo_report()
    view = rep.views[0]
    fab = view.fabrics[0]
    assert fab.svg is not None
    items = tuple(
        dataclasses.replace(i, title=HOSTILE) if isinstance(i, report.Circle) else i
        for i in fab.svg.items
    )
    hostile_view = dataclasses.replace(
        view,
        strategy=HOSTILE,
        headline=HOSTILE,
        fabrics=(
            dataclasses.replace(
                fab, name=HOSTILE, svg=dataclasses.replace(fab.svg, items=items), notes=(HOSTILE,)
            ),
        ),
        findings=((HOSTILE, HOSTILE, 2),),
    )
    hostile = dataclasses.replace(
        rep,
        title=HOSTILE,
        site=HOSTILE,
        description=HOSTILE,
        facts=((HOSTILE, HOSTILE),),
        views=(hostile_view,),
        warnings=(report.Message("warning", HOSTILE, HOSTILE, HOSTILE),),
    )
    html = report.render_html(hostile)
    assert HOSTILE not in html
    assert "<script" not in html and "<b onmouseover" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;&#34;quoted&#34;" in html
    check_html(html)
    for el in parse_svgs(html):
        for t in el.iter("{http://www.w3.org/2000/svg}title"):
            assert t.text is not None
    assert sum(texts(el).count(HOSTILE) for el in parse_svgs(html)) >= 20  # router titles


# ----------------------------------------------------------------------------- spider


def test_spider_report() -> None:
    html = spider_html()
    check_html(html)
    svgs = parse_svgs(html)
    assert len(html.encode()) < 3_000_000
    # fabric: one switch drawn, the other summarized; spine crossing bars on core1's 16 OSS
    # modules and its MDS module
    assert "1 more switch(es) not drawn (core2)" in html
    fabric = next(e for e in svgs if e.get("aria-label") == "storage fabric sion")
    risers = [e for e in fabric.iter() if e.get("class") == "riser"]
    assert len(risers) == 17
    # torus: overview + 2 slices per direction, 25 x 32 cells each
    maps = [e for e in svgs if "slice z=" in (e.get("aria-label") or "")]
    assert len(maps) == 4
    for m in maps:
        cells = [e for e in m if (e.get("class") or "").startswith("h")]
        assert len(cells) == 25 * 32
    assert "96.9 % of 1344.0 write flows" in html


# ----------------------------------------------------------------------------- determinism


def test_deterministic_across_hash_seeds(tmp_path: Path) -> None:
    outs = []
    for seed in ("0", "12345"):
        out = tmp_path / f"r{seed}.html"
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        code = "import sys; from lnetgen.cli.report import command; command(sys.argv[1:])"
        proc = subprocess.run(
            [sys.executable, "-c", code, DEMO, "--compare", "--out", str(out)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert outs[0].decode() == demo_html(True)


# ----------------------------------------------------------------------------- CLI


def test_cli_writes_the_file(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    res = CliRunner().invoke(command, [DEMO, "-s", "projection", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert f"{out}: " in res.output and "strategy projection" in res.output
    html = out.read_text(encoding="utf-8")
    check_html(html)
    assert "strategy projection" in html


@pytest.mark.parametrize(
    "args",
    [
        ["--compare", "-s", "groups"],
        ["--strategies", "groups"],
        ["--compare", "--strategies", "groups,nope"],
        ["-s", "nope"],
    ],
)
def test_cli_usage_errors(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "r.html"
    res = CliRunner().invoke(command, [DEMO, *args, "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert not out.exists()


def test_cli_invalid_inventory(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("site: x\n", encoding="utf-8")
    out = tmp_path / "r.html"
    res = CliRunner().invoke(command, [str(bad), "--out", str(out)])
    assert res.exit_code == 1  # an invalid inventory is a finding in every command
    assert "error[" in res.output and not out.exists()


# ----------------------------------------------------------------------------- Chromium


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _apt_install() -> str:
    """Install Debian's chromium; '' on success, else why not."""
    if shutil.which("apt-get") is None:
        return "apt-get is not available"
    if os.geteuid() != 0:
        return "not root, cannot apt-get install"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    proc = None
    for attempt in range(2):
        if attempt:  # package lists may be missing or stale on a fresh machine
            subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=600)
        proc = subprocess.run(
            ["apt-get", "install", "-y", "chromium"],
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        if proc.returncode == 0:
            return ""
    assert proc is not None
    return f"apt-get install chromium failed: {proc.stderr.strip()[-300:]}"


@pytest.fixture(scope="session")
def chromium() -> str:
    path = _chromium()
    if path is None:
        reason = _apt_install()
        if reason:
            pytest.skip(f"the screenshot test needs Debian's chromium: {reason}")
        path = _chromium()
        if path is None:
            pytest.skip("chromium still missing after apt-get install")
    return path


def decode_png(data: bytes) -> tuple[int, int, np.ndarray]:
    """(width, height, pixels as (H, W, channels) uint8) of an 8-bit, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, []
    width = height = ctype = 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, height, depth, ctype, _c, _f, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0, (depth, interlace)
        elif kind == b"IDAT":
            idat.append(body)
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8)
    rows = raw.reshape(height, width * bpp + 1)
    out = np.zeros((height, width * bpp), dtype=np.uint8)
    prev = np.zeros(width * bpp, dtype=np.uint8)
    for y in range(height):
        kind, line = int(rows[y, 0]), rows[y, 1:]
        if kind == 0:
            cur = line.copy()
        elif kind == 1:  # Sub: running sum per channel
            cur = np.cumsum(line.reshape(width, bpp), axis=0, dtype=np.uint64)
            cur = (cur % 256).astype(np.uint8).reshape(-1)
        elif kind == 2:  # Up
            cur = line + prev
        else:  # Average, Paeth: sequential along the row
            f, b = line.tolist(), prev.tolist()
            c = [0] * len(f)
            for i in range(len(f)):
                a = c[i - bpp] if i >= bpp else 0
                if kind == 3:
                    c[i] = (f[i] + (a + b[i]) // 2) & 255
                else:
                    ul = b[i - bpp] if i >= bpp else 0
                    p = a + b[i] - ul
                    pa, pb, pc = abs(p - a), abs(p - b[i]), abs(p - ul)
                    pred = a if pa <= pb and pa <= pc else (b[i] if pb <= pc else ul)
                    c[i] = (f[i] + pred) & 255
            cur = np.asarray(c, dtype=np.uint8)
        out[y] = cur
        prev = cur
    return width, height, out.reshape(height, width, bpp)


@pytest.mark.integration
def test_screenshot_in_headless_chromium(chromium: str, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(demo_html(True), encoding="utf-8")
    png = tmp_path / "shot.png"
    cmd = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={png}",
        "--window-size=1400,3000",
        page.as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert png.exists(), f"no screenshot (exit {proc.returncode}): {proc.stderr[-2000:]}"
    width, height, px = decode_png(png.read_bytes())
    assert (width, height) == (1400, 3000)
    rgb = px[:, :, :3].reshape(-1, 3)
    colours = np.unique(rgb[::7], axis=0)
    non_white = float((rgb.min(axis=1) < 240).mean())
    assert len(colours) > 50, len(colours)  # heat maps, net colours, text
    assert non_white > 0.05, non_white
    # the heat scale's darkest bin (#800026) and a net colour (#4e79a7) are on the page
    for colour in ((0x80, 0x00, 0x26), (0x4E, 0x79, 0xA7)):
        assert (np.abs(rgb.astype(int) - colour).max(axis=1) <= 2).any(), colour
