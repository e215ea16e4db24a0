"""Advice weighed by the model against what an administrator would otherwise do: a job's
hand-picked OSTs against Lustre's own allocation at the same width, seed 001's multiple and
pools against the widest stripe count the limit allows (both figures given), no router verdict
without the torus link rate, and ``place osts --count K`` naming K files, not one."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from test_advise import SITES, site_plan, with_ost_rate

from lnetgen.advise import advise_stripes
from lnetgen.api import load_plan
from lnetgen.cli.advise import routers_cmd, stripes_cmd
from lnetgen.cli.place import place_osts_cmd
from lnetgen.place import clients_by_name
from lnetgen.throughput import WorkloadSpec, predict

DATA = Path(__file__).resolve().parent / "data"
SITE_A = str(DATA / "advice_siteA.yaml")  # 32 OSTs, 8 per group, every rate given
SITE_B2 = str(DATA / "advice_siteB2.yaml")  # a torus without its link rate


def test_a_jobs_list_is_not_advised_where_lustres_allocation_predicts_more() -> None:
    """Blue Waters SCRATCH with OSTs of 300 MB/s, an 8-node job: was ``lfs setstripe -c 144
    -o 0-11,132-143,...`` at 14.1 GB/s, judged against stripe count 1 only, where Lustre's
    own allocation of as many OSTs predicts 18.8 GB/s.  Now the list is weighed against
    the allocation at the same width and the plain ``-c N`` is advised, with both figures."""
    site, plan = site_plan("bluewaters", "groups")
    site = with_ost_rate(site, 300.0)
    label = "nid[00001-00008]"
    job = clients_by_name(site, label)
    a = advise_stripes(site, plan, "scratch", job=job, job_label=label)
    assert a.no_advice == ""
    assert a.commands == (f"lfs setstripe -c {a.stripe_count} FILE",)
    allocated = predict(
        site,
        plan,
        WorkloadSpec(
            name="check",
            pattern="shared-file",
            filesystems=("scratch",),
            ranks=8,
            nodes=label,
            stripe_count=a.stripe_count,
        ),
    ).aggregate_mb_s
    assert a.advised is not None and a.advised.aggregate_mb_s == allocated
    (w,) = a.weighed
    assert w.kept.startswith(f"-c {a.stripe_count}") and w.other.startswith("the OSTs listed")
    assert w.kept_mb_s[0] is not None and w.other_mb_s[0] is not None
    assert w.kept_mb_s[0] > w.other_mb_s[0]


def test_the_multiple_and_the_pools_are_weighed_against_the_limit() -> None:
    """jl-a, 32 OSTs in groups of 8, ``--max-stripe 20``: was ``-c 16`` (a multiple of 8, two
    pools) with no word that one file at ``-c 20`` predicts 10.0 GB/s against 8.0.  The pools
    stay (a file per pool covers the file system, 16 GB/s), and the trade-off is said with
    both figures."""
    site, plan, _ = load_plan(SITE_A, None, None)
    a = advise_stripes(site, plan, "jfs", max_stripe=20)
    assert len(a.pools) == 2 and a.stripe_count == 16 and a.no_advice == ""
    multiple, pool = a.weighed
    assert (multiple.kept, multiple.other) == ("-c 20", "-c 16")
    assert set(multiple.kept_mb_s) == {10_000.0} and set(multiple.other_mb_s) == {8_000.0}
    assert pool.kept == "one file at -c 20, no pool" and set(pool.other_mb_s) == {8_000.0}
    r = CliRunner().invoke(stripes_cmd, [SITE_A, "--max-stripe", "20"])
    assert r.exit_code == 0, r.output
    assert "weighed: -c 20 10.0 GB/s against -c 16 8.0 GB/s" in r.output
    assert "lfs setstripe -c 20 and no pool" in r.output


def test_spider_widow1_says_what_the_pools_cost_one_file() -> None:
    """Spider widow1 (672 OSTs, 7 per group, limit 160): six pools of 112 (seed 001's
    arithmetic) were advised with no word that one file at ``-c 160`` predicts 28.6 GB/s
    against 20.0 GB/s on a pool."""
    site, plan = site_plan("spider", "projection")
    a = advise_stripes(site, plan, "widow1")
    assert len(a.pools) == 6 and a.stripe_count == 112
    pool = next(w for w in a.weighed if "pool" in w.other)
    assert pool.kept == "one file at -c 160, no pool"
    assert pool.kept_mb_s[0] is not None and pool.other_mb_s[0] is not None
    assert (
        round(pool.kept_mb_s[0] / 1000, 1) == 28.6 and round(pool.other_mb_s[0] / 1000, 1) == 20.0
    )
    # Spider gives no router rate: both figures are upper bounds, and the line says so
    assert pool.bound == "no router rate"
    r = CliRunner().invoke(stripes_cmd, [str(SITES / "spider.yaml"), "--fs", "widow1"])
    weighed = [ln for ln in r.output.splitlines() if ln.lstrip().startswith("weighed")]
    assert weighed and all("(figures at most: no router rate)" in ln for ln in weighed)


def test_a_jobs_stripe_is_not_shrunk_by_pool_arithmetic() -> None:
    """With ``--job`` no pool is made, so the widths tried reach the limit: a job on
    Spider widow1 may be given more than six pools' 112 OSTs (was: capped at 112)."""
    site, plan = site_plan("spider", "projection")
    rated = with_ost_rate(site, 180.0)
    job = list(range(0, len(site.clients), 97))[:64]
    label = ",".join(site.clients.names[i] for i in job)
    a = advise_stripes(rated, plan, "widow1", job=job, job_label=label)
    assert a.stripe_count > 112 and a.stripe_count <= 160


def test_advise_routers_without_the_torus_link_rate_gives_no_verdict() -> None:
    """jl-b2 gives no torus link rate: was "keep the routers where they are" (exit 0), a
    verdict no prediction could give, since moving a router changes torus paths only."""
    r = CliRunner().invoke(routers_cmd, [SITE_B2])
    assert r.exit_code == 0, r.output
    assert "no advice: needs the torus link rate" in r.output
    assert "keep the routers" not in r.output and "Traceback" not in r.output


def test_place_osts_count_names_a_file_per_ost() -> None:
    """``--count 3`` printed three ``lfs setstripe`` lines for the same FILE (lfs refuses
    the second and third: the file has a layout).  Now FILE.0, FILE.1, FILE.2; one OST keeps
    FILE."""
    demo = str(SITES / "demo.yaml")
    r = CliRunner().invoke(
        place_osts_cmd, [demo, "--client", "nid00001", "--fs", "scratch", "--count", "3"]
    )
    assert r.exit_code == 0, r.output
    names = [line.split("  #")[0].split()[-1] for line in r.output.splitlines()]
    assert names == ["FILE.0", "FILE.1", "FILE.2"]
    r = CliRunner().invoke(place_osts_cmd, [demo, "--client", "nid00001", "--fs", "scratch"])
    assert r.output.split("  #")[0].endswith(" FILE")
