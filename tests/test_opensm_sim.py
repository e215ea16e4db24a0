"""OpenSM settings measured by the real OpenSM: Debian's opensm configures a simulated copy of a
fabric (ibsim, through libumad2sim.so), dump_fts reads the forwarding tables back, and every
route between the fabric's two host classes is traced and counted per spine and leaf uplink.

Seed 002 (LANL Wolf): 24 IO nodes on port 18 of 24 line cards put all compute->IO routes on one
spine; guid files with max_reverse_hops 1 (or the port plan) spread them.  Spider: the same
settings make the busiest uplink 6x instead of 1.88-2x, so they must not be written there, and
``fabric check`` must fail when an inventory records them.  Blue Waters' top-of-rack switches:
ftree falls back to minhop, which ``fabric check`` must see in OpenSM's log.

The programs are installed with apt-get when missing; the test skips, saying why, when that
is not possible (not root, no apt-get, or the install fails).  About a minute.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from lnetgen.cli.fabric import command
from lnetgen.fabric import advise, fabric_of, simulate
from lnetgen.inventory import load_site

pytestmark = pytest.mark.integration

SITES = Path(__file__).resolve().parent.parent / "sites"
BOUND = 2.0


def _apt_install() -> str:
    """Install the simulator packages; '' on success, else why not."""
    if shutil.which("apt-get") is None:
        return "apt-get is not available"
    if os.geteuid() != 0:
        return "not root, cannot apt-get install"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", *simulate.PACKAGES]
    for attempt in range(2):
        if attempt:  # package lists may be missing or stale on a fresh machine
            subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=600)
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if proc.returncode == 0:
            return ""
    return f"apt-get install {' '.join(simulate.PACKAGES)} failed: {proc.stderr.strip()[-300:]}"


@pytest.fixture(scope="module")
def tools() -> None:
    if simulate.missing_tools():
        reason = _apt_install()
        if reason:
            pytest.skip(f"OpenSM simulation needs {' '.join(simulate.PACKAGES)}: {reason}")
    missing = simulate.missing_tools()
    if missing:
        pytest.skip(f"still missing after install: {', '.join(missing)}")


@cache
def wolf_rows() -> dict[str, advise.CheckRow]:
    site, _ = load_site(str(SITES / "wolf.yaml"))
    rows = advise.check(site, fabric_of(site, "wolf-ib"))
    return {r.candidate.key: r for r in rows}


def _with_opensm(tmp_path: Path, site: str, anchor: str, opensm: str) -> Path:
    text = (SITES / site).read_text()
    assert anchor in text
    path = tmp_path / site
    path.write_text(text.replace(anchor, f"{anchor}    opensm: {opensm}\n", 1))
    return path


def test_wolf_as_cabled_has_the_spine_hot_spot(tools: None) -> None:
    r = wolf_rows()["none"].result
    assert r.engine == "ftree" and not r.fallback
    f = r.forward
    assert f.routes == 616 * 24 and f.unrouted == 0
    assert r.backward.routes == 24 * 616 and r.backward.unrouted == 0
    # every compute->IO route that crosses the spine crosses the same one (LANL's finding)
    crossing = sum(f.spine)
    assert crossing == 616 * 24 - 24 * 17  # all but the 17 compute nodes beside each IO node
    assert max(f.spine) == crossing
    assert f.worst_ratio > BOUND  # measured: 12x (432 routes where 36 would do)
    assert r.health.pairs == 640 * 639  # "Wolf has 408,960 routes"
    assert r.health.unrouted == 0


def test_wolf_guid_files_with_zero_reverse_hops_keep_the_hot_spot(tools: None) -> None:
    """With an io_guid_file and max_reverse_hops 0, ftree routes the IO nodes after the compute
    nodes and puts them all on the first spine."""
    r = wolf_rows()["guid-files"].result
    assert r.engine == "ftree" and "616 of them CNs" in r.ca_summary
    assert r.forward.worst_ratio > BOUND
    assert sum(1 for n in r.forward.spine if n) == 1


def test_wolf_recorded_settings_and_port_plan_are_balanced(tools: None) -> None:
    rows = wolf_rows()
    assert rows["guid-files-mrh1"].candidate.recorded  # sites/wolf.yaml records them
    for key in ("guid-files-mrh1", "port-plan", "port-plan-recorded"):
        r = rows[key].result
        assert r.engine == "ftree", key
        f, b, h = r.forward, r.backward, r.health
        assert f.unrouted == 0 and b.unrouted == 0 and h.unrouted == 0, key
        assert f.worst_ratio <= BOUND, (key, f.worst_leaf, f.worst_load, f.worst_best)
        assert min(f.spine) > 0, key  # every spine carries compute->IO routes
        assert h.cdg_acyclic, (key, h.cycle)
    rec = rows["guid-files-mrh1"].result
    assert "616 of them CNs" in rec.ca_summary  # the cn/io files were read
    assert rec.health.reverse == 0  # max_reverse_hops 1 is not used by any route here


def test_spider_default_writes_nothing_and_passes(tools: None) -> None:
    """Projection (the default) keeps every router on its server's leaf module: nothing to
    judge.  Baseline puts every router on every storage net, as the settings were judged
    before the plan was: the old advice makes that 6x."""
    res = CliRunner().invoke(command, ["check", str(SITES / "spider.yaml")])
    assert res.exit_code == 0, res.output
    assert "data in the projection plan" in res.output
    assert (
        "no route between a router and a server of one storage net of the plan crosses a spine"
        in res.output
    )
    assert "advice: fabric sion: record no OpenSM setting" in res.output
    res = CliRunner().invoke(command, ["check", str(SITES / "spider.yaml"), "-s", "baseline"])
    assert res.exit_code == 0, res.output
    # core1 (with the MDS module) 2.00x, core2 1.88x: the fabric's worst is 2.00x
    assert "none                  2.00x  (what generate writes)" in res.output
    assert "(best possible 48): 1.88x" in res.output
    assert "guid-files-mrh1       6.00x" in res.output
    assert "advice: fabric sion: record no OpenSM setting" in res.output


def test_spider_recorded_settings_worse_than_none_fail(tools: None, tmp_path: Path) -> None:
    """The old advice (guid files + max_reverse_hops 1), recorded, judged on baseline's routes:
    6x against 2x, exit 1."""
    path = _with_opensm(
        tmp_path, "spider.yaml", "    role: storage\n", "{io_guid_file: true, max_reverse_hops: 1}"
    )
    res = CliRunner().invoke(command, ["check", str(path), "--strategy", "baseline"])
    assert res.exit_code == 1, res.output
    assert "FAIL: fabric sion: the recorded settings (io_guid_file, max_reverse_hops 1) are " in (
        res.output
    )
    assert "worse than none: busiest leaf uplink 6.00x against 2.00x" in res.output


def test_demo_guid_file_is_advised(tools: None, tmp_path: Path) -> None:
    """Demo with baseline (every router with every server): core2 2.00x with no setting, 1.00x
    with the io_guid_file; with lnetgen's old opensm.conf (max_reverse_hops 1) core1 went from
    1.00x to 2.00x."""
    res = CliRunner().invoke(
        command, ["check", str(SITES / "demo.yaml"), "-s", "baseline", "--keep", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    assert "== none: ftree, no guid files, max_reverse_hops 0 [core1]" in res.output
    assert "== guid-files: ftree + io_guid_file [core2]" in res.output
    assert "router->server routes per spine" in res.output
    # the figure in parentheses says what it counts: the spines' numbers add up to the
    # crossings, not to every route traced (a "(72)" over spines summing to 54 read as routes
    # lost)
    for m in re.finditer(
        r"routes per spine \((\d+) routes, (\d+) spine crossings\): ([\d ]+)", res.output
    ):
        assert sum(int(n) for n in m[3].split()) == int(m[2]) <= 2 * int(m[1])
    assert "spine crossings)" in res.output
    assert "port-plan" not in res.output  # storage fabric: no IO port plan
    assert (
        "advice: fabric storage-ib: record opensm: {io_guid_file: true, max_reverse_hops: 0} "
        "(1.00x against 2.00x with no setting)"
    ) in res.output
    kept = tmp_path / "storage-ib" / "guid-files-mrh1" / "core1"
    assert (kept / "dump_fts.txt").read_text().startswith("Unicast lids")
    assert "max_reverse_hops 1" in (kept / "opensm.conf").read_text()


def test_fallback_to_minhop_is_seen_and_fails_when_recorded(tools: None, tmp_path: Path) -> None:
    """Blue Waters' fabrics are top-of-rack switches: ftree cannot build its tree and OpenSM
    configures minhop.  Noted without a record; a recorded ftree setting fails."""
    site, _ = load_site(str(SITES / "bluewaters.yaml"))
    fab = fabric_of(site, "home-ib")
    rows = advise.check(site, fab, only={"none"})
    assert rows and all(r.result.engine == "minhop" for r in rows)
    assert all("ftree: cannot build lid matrices" in r.result.fallback for r in rows)
    v = advise.judge(fab, rows)
    assert not v.problems and v.notes and "falls back" in v.notes[0]

    path = _with_opensm(
        tmp_path,
        "bluewaters.yaml",
        "  - name: home-ib\n    role: storage\n",
        "{io_guid_file: true}",
    )
    res = CliRunner().invoke(command, ["check", str(path), "--fabric", "home-ib"])
    assert res.exit_code == 1, res.output
    assert "FAIL: fabric home-ib: the recorded settings make OpenSM fall back from ftree" in (
        res.output
    )


def test_a_storage_fabric_is_judged_on_the_routes_its_plan_uses(tools: None) -> None:
    """``fabric check`` counted every router->server route of a storage fabric, traffic no
    fine-grained layout sends: Slingshot's plan keeps every router on its servers' leaf, yet
    it was told to record OpenSM settings and failed at 3.50x.  Judged on the plan's pairs
    nothing crosses a spine: no advice, no failure.  Counted over every pair, as before."""
    from lnetgen.api import load_plan

    site, plan, _ = load_plan(str(SITES / "slingshot.yaml"), None, None)
    fab = fabric_of(site, "storage-ib")
    everything = advise.judge(fab, advise.check(site, fab, only={"none"}))
    assert everything.scores["none"] > BOUND and everything.problems
    pairs = advise.plan_pairs(plan)
    routers, servers = {r.name for r in site.routers}, {s.name for s in site.servers}
    assert pairs and all(r in routers and s in servers for r, s in pairs)
    v = advise.judge(fab, advise.check(site, fab, pairs=pairs))
    assert set(v.scores.values()) == {0.0} and not v.problems
    assert v.best.key == "none" and "crosses a spine" in " ".join(v.notes)


def test_a_plan_whose_routes_cross_the_spines_is_judged_on_them(tools: None) -> None:
    """Baseline on the demo puts every router on every storage net: its pairs cross the spines
    and the guid files measure better than none (1.00x against 2.00x)."""
    from lnetgen.api import load_plan

    site, plan, _ = load_plan(str(SITES / "demo.yaml"), "baseline", None)
    fab = fabric_of(site, "storage-ib")
    v = advise.judge(fab, advise.check(site, fab, pairs=advise.plan_pairs(plan)))
    assert (v.scores["none"], v.scores["guid-files"]) == (2.0, 1.0)
    assert v.best.key == "guid-files"


def test_slingshot_check_passes_on_its_plan(tools: None) -> None:
    """``fabric check sites/slingshot.yaml`` failed (3.50x, limit 2x) and advised recording
    settings for traffic its nearest-neighbor plan never sends across a spine."""
    res = CliRunner().invoke(command, ["check", str(SITES / "slingshot.yaml"), "--format", "json"])
    assert res.exit_code == 0, res.output
    (fab,) = json.loads(res.stdout)["fabrics"]
    assert fab["plan_strategy"] == "nearest-neighbor"
