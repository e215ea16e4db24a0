"""The layout checked by the real OpenSM: Debian's opensm configures a simulated copy of Wolf's
compute fabric (ibsim, through libumad2sim.so), dump_fts reads the forwarding tables back, and
every compute->IO and IO->compute route is traced and counted per spine and leaf uplink.

Seed 002 (LANL Wolf): 24 IO nodes on port 18 of 24 line cards put all compute->IO routes on one
spine.  lnetgen's port plan plus its opensm.conf must bring the busiest leaf uplink within 2x
of the best possible (compute nodes on the leaf x ceil(IO nodes elsewhere / uplinks)).

The programs are installed with apt-get when missing; the test skips, saying why, when that
is not possible (not root, no apt-get, or the install fails).  About half a minute.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from lnetgen.cli.fabric import command
from lnetgen.fabric import simulate
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
def wolf_rows() -> dict[str, simulate.CheckRow]:
    site, _ = load_site(str(SITES / "wolf.yaml"))
    rows = simulate.check(site)
    return {r.scenario.key: r for r in rows}


def test_wolf_as_cabled_has_the_spine_hot_spot(tools: None) -> None:
    r = wolf_rows()["as-cabled"].result
    assert r.engine == "ftree"
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
    """Why lnetgen's opensm.conf says max_reverse_hops 1: with an io_guid_file and 0, ftree
    routes the IO nodes after the compute nodes and puts them all on the first spine."""
    r = wolf_rows()["files-h0"].result
    assert r.engine == "ftree" and "616 of them CNs" in r.ca_summary
    assert r.forward.worst_ratio > BOUND
    assert sum(1 for n in r.forward.spine if n) == 1


def test_wolf_recommended_layout_is_balanced(tools: None) -> None:
    rows = wolf_rows()
    for key in ("recommended", "files", "port-plan"):
        r = rows[key].result
        assert r.engine == "ftree", key
        f, b, h = r.forward, r.backward, r.health
        assert f.unrouted == 0 and b.unrouted == 0 and h.unrouted == 0, key
        assert f.worst_ratio <= BOUND, (key, f.worst_leaf, f.worst_load, f.worst_best)
        assert min(f.spine) > 0, key  # every spine carries compute->IO routes
        assert h.cdg_acyclic, (key, h.cycle)
    rec = rows["recommended"].result
    assert "616 of them CNs" in rec.ca_summary  # the cn/io files were read
    assert rec.health.reverse == 0  # max_reverse_hops 1 is not used by any route here


def test_fabric_check_command_on_demo(tools: None, tmp_path: Path) -> None:
    res = CliRunner().invoke(command, ["check", str(SITES / "demo.yaml"), "--keep", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "== as-cabled: inventory cabling, ftree without guid files [core1]" in res.output
    assert "== files: inventory cabling, lnetgen opensm.conf [core2]" in res.output
    assert "router->server routes per spine" in res.output
    assert "port-plan" not in res.output  # storage fabric: no IO port plan
    kept = tmp_path / "files" / "core1"
    assert (kept / "dump_fts.txt").read_text().startswith("Unicast lids")
    assert "max_reverse_hops 1" in (kept / "opensm.conf").read_text()
