"""lnetgen advise stripes: seed 001's pools and multiples on Blue Waters, a job's nearest
groups by hand on the demo, and the CLI contract."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from click.testing import CliRunner

from lnetgen.advise import advise_stripes
from lnetgen.api import load_plan
from lnetgen.cli.advise import stripes_cmd
from lnetgen.model import Site
from lnetgen.place import place_osts
from lnetgen.plan import Plan

SITES = Path(__file__).resolve().parent.parent / "sites"


@cache
def site_plan(name: str, strategy: str) -> tuple[Site, Plan]:
    site, plan, _ = load_plan(str(SITES / f"{name}.yaml"), strategy, None)
    return site, plan


def test_blue_waters_scratch_ten_pools_of_144() -> None:
    """Seed 001: 1,440 OSTs, 12 behind each 4:3 group, a stripe limit of 160 -> ten pools
    of 144 OSTs (twelve whole groups each), as the paper built them; lctl ranges in hex."""
    site, plan = site_plan("bluewaters", "groups")
    a = advise_stripes(site, plan, "scratch", max_stripe=160)
    assert (a.osts, a.group_osts, a.stripe_count, len(a.pools)) == (1440, 12, 144, 10)
    assert all(len(p.osts) == 144 and len(p.nets) == 12 for p in a.pools)
    assert a.commands[:2] == (
        "lctl pool_new scratch.g01",
        "lctl pool_add scratch.g01 scratch-OST[0000-008f]",
    )
    assert a.commands[-1] == "lfs setstripe -p g10 -c 144 FILE.g10"
    assert a.notes == ()
    # judged: ten files, one per pool, against one single-stripe file
    assert a.advised is not None and a.default is not None
    assert a.advised.aggregate_mb_s == 900_000.0  # SCRATCH's 360 OSS at 2.5 GB/s
    assert a.default.aggregate_mb_s == 2_500.0  # one OST's OSS


def test_home_fits_under_the_limit() -> None:
    site, plan = site_plan("bluewaters", "groups")
    a = advise_stripes(site, plan, "home")
    assert a.stripe_count == 144 and a.pools == ()
    assert a.commands == ("lfs setstripe -c 144 FILE",)


def test_a_job_gets_its_nearest_group() -> None:
    """On the demo (no rates: every width predicts n/a, so the narrowest is kept) a one-node
    job gets the OSTs of the group nearest to it -- the same OSTs ``place osts`` ranks first
    for that client."""
    site, plan = site_plan("demo", "groups")
    a = advise_stripes(site, plan, "scratch", job=[0], job_label=site.clients.names[0])
    near = place_osts(site, plan, site.clients.names[0], a.group_osts, "scratch")
    assert set(a.job_osts) == {o.index for o in near}
    assert a.commands[-1].startswith(f"lfs setstripe -c {a.group_osts} -o ")


def test_cli_text_json_and_errors() -> None:
    demo = str(SITES / "demo.yaml")
    r = CliRunner().invoke(stripes_cmd, [demo, "--fs", "scratch"])
    assert r.exit_code == 0, r.output
    assert "lfs setstripe -c" in r.output and "n/a" in r.output
    r = CliRunner().invoke(stripes_cmd, [demo, "--fs", "scratch", "--format", "json"])
    assert json.loads(r.stdout)["fs"] == "scratch"
    for args, words in (
        (["--fs", "nope"], "no file system 'nope'"),
        ([], "name one with --fs"),
        (["--fs", "scratch", "--job", "nosuch[1-2]"], "nosuch"),
        (["--fs", "scratch", "--max-stripe", "0"], "--max-stripe"),
    ):
        r = CliRunner().invoke(stripes_cmd, [demo, *args])
        assert r.exit_code == 2, (args, r.output)
        assert words in r.output and "Traceback" not in r.output
