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


def with_ost_rate(site: Site, mb_s: float = 1000.0) -> Site:
    """``site`` with an OST rate (labelled a test figure): stripe advice needs one."""
    from dataclasses import replace

    from lnetgen.rates import Rate

    return replace(site, rates=replace(site.rates, ost=Rate(mb_s, "test figure")))


def test_blue_waters_scratch_ten_pools_of_144() -> None:
    """Seed 001: 1,440 OSTs, 12 behind each 4:3 group, a stripe limit of 160 -> ten pools
    of 144 OSTs (twelve whole groups each), as the paper built them; lctl ranges in hex.
    Blue Waters gives no OST rate, so the advice is judged with a test figure of 1,000 MB/s
    (without one it is withheld: tests/test_advise_measured.py)."""
    site, plan = site_plan("bluewaters", "groups")
    a = advise_stripes(with_ost_rate(site), plan, "scratch", max_stripe=160)
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
    assert a.default.aggregate_mb_s == 1_000.0  # one OST
    # on five random draws of the 1,440 ranks, all gaining
    assert [j.seed for j in a.judged] == [0, 1, 2, 3, 4] and a.no_advice == ""


def test_home_fits_under_the_limit() -> None:
    site, plan = site_plan("bluewaters", "groups")
    a = advise_stripes(with_ost_rate(site), plan, "home")
    assert (a.max_stripe, a.limit_source[:8]) == (160, "assumed:")  # no release stated
    assert a.stripe_count == 144 and a.pools == ()
    assert a.commands == ("lfs setstripe -c 144 FILE",)


def test_a_job_gets_its_nearest_group() -> None:
    """On the demo a one-node job is judged on the OSTs of the group nearest to it -- the
    same OSTs ``place osts`` ranks first for that client.  The demo gives no rates: no width
    can be chosen, so no advice (it was ``lfs setstripe -c 12 -o ...``, judged n/a); with an
    OST rate the widths are predicted and the narrowest within 95 % of the best is given."""
    site, plan = site_plan("demo", "groups")
    a = advise_stripes(site, plan, "scratch", job=[0], job_label=site.clients.names[0])
    near = place_osts(site, plan, site.clients.names[0], a.group_osts, "scratch")
    assert set(a.job_osts) == {o.index for o in near}
    assert a.commands == () and "needs the ost rate" in a.no_advice
    b = advise_stripes(
        with_ost_rate(site), plan, "scratch", job=[0], job_label=site.clients.names[0]
    )
    # the job's nearest OSTs predict no more than Lustre's own choice of as many (36.0 GB/s
    # each), so the advice is the plain -c (tests/test_advice_measured.py)
    assert b.no_advice == "" and b.commands[-1] == f"lfs setstripe -c {b.stripe_count} FILE"


def test_cli_text_json_and_errors() -> None:
    demo = str(SITES / "demo.yaml")
    r = CliRunner().invoke(stripes_cmd, [demo, "--fs", "scratch"])
    assert r.exit_code == 0, r.output
    assert "no advice: needs the ost rate" in r.output and "n/a" in r.output
    assert "lfs setstripe" not in r.output
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


def _demo_with_slots(tmp: Path, slots: str) -> str:
    """The demo with torus links of 100 MB/s, OSTs of 1,000 MB/s and router slots."""
    text = (SITES / "demo.yaml").read_text()
    text = text.replace("  routing: xyz\n", f"  routing: xyz\n  router_slots: {slots}\n", 1)
    text += (
        '\nrates:\n  torus_link: {x: "100 MB/s", y: "100 MB/s", z: "100 MB/s", source: "test"}\n'
        '  ost: {rate: "1000 MB/s", source: "test"}\n'
    )
    path = tmp / "demo-slots.yaml"
    path.write_text(text)
    return str(path)


def test_advise_routers_moves_the_one_router_to_the_job(tmp_path: Path) -> None:
    """Hand-checked on the demo's 4x4x4 torus with projection: oss02's net has one router,
    rtr02 at (2,0,0).  Two ranks on the two clients of chip (1,2,1) write to oss02's OSTs 4
    and 5; their paths (4 hops) share their first link at 100 MB/s: 50 MB/s each, 100 in all.
    Of the slots (1,2,1) and (3,0,3), moving rtr02 onto the job's own chip takes the torus
    off the path: each rank gets its OST's 1,000 MB/s, 2,000 in all -- which is also the
    bound (torus unconstrained).  Exact search: 20 routers x 2 slots."""
    from lnetgen import nodes
    from lnetgen.advise.routers import advise_routers
    from lnetgen.inventory import load_site
    from lnetgen.solve import solve
    from lnetgen.throughput import parse_inline

    site = load_site(_demo_with_slots(tmp_path, "[[1, 2, 1], [3, 0, 3]]"))[0]
    plan = solve(site, "projection")
    job = [
        n
        for n, c in zip(site.clients.names, site.clients.coords, strict=True)
        if tuple(c) == (1, 2, 1)
    ]
    assert len(job) == 2
    spec = parse_inline(f"filesystems=scratch,ranks=2,nodes={nodes.fold(job)},osts=4-5")
    a = advise_routers(site, plan, spec, count=1)
    assert a.method == "exact" and a.evaluated == 1 + 20 * 2
    assert [(m.router, m.old, m.new) for m in a.moves] == [("rtr02", (2, 0, 0), (1, 2, 1))]
    assert a.edits == ("routers[1] (rtr02).coords: [2, 0, 0] -> [1, 2, 1]",)
    assert a.before.aggregate_mb_s == 100.0
    assert a.after.aggregate_mb_s == 2000.0 and a.bound_mb_s == 2000.0


def test_advise_routers_refuses_without_slots() -> None:
    from lnetgen.advise.routers import advise_routers
    from lnetgen.diagnostics import InputError
    from lnetgen.throughput import parse_inline

    site, plan = site_plan("demo", "projection")
    try:
        advise_routers(site, plan, parse_inline("nodes=linear"))
    except InputError as exc:
        assert "router_slots" in exc.diagnostics[0].message
    else:
        raise AssertionError("no error without slots")


def test_advise_runs_on_every_shipped_site() -> None:
    """Every shipped site x file system gets stripe advice; the torus sites get router advice
    within a small budget, never predicting below the current placement or above the bound."""
    from lnetgen.advise.routers import advise_routers
    from lnetgen.throughput import parse_inline

    for name, strategy in (("spider", "projection"), ("bluewaters", "groups"), ("wolf", "groups")):
        site, plan = site_plan(name, strategy)
        for fs in sorted({s.fs for s in site.servers if s.role == "oss" and s.osts}):
            a = advise_stripes(site, plan, fs, max_stripe=160)
            assert a.stripe_count % a.group_osts == 0 or a.notes
            assert bool(a.commands) == (a.no_advice == "")
            assert a.stripe_count <= 160
        if site.torus is None:
            continue
        r = advise_routers(site, plan, parse_inline("nodes=random"), count=1, budget=6)
        assert r.method == "greedy" and r.evaluated <= 6 * len(r.seeds)
        before, after = r.before.aggregate_mb_s or 0, r.after.aggregate_mb_s or 0
        assert before <= after <= (r.bound_mb_s or float("inf")) + 1e-6


def test_cli_advise_routers(tmp_path: Path) -> None:
    from lnetgen.cli.advise import routers_cmd

    site = _demo_with_slots(tmp_path, "[[1, 2, 1], [3, 0, 3]]")
    r = CliRunner().invoke(routers_cmd, [site, "-s", "projection", "--budget", "5"])
    assert r.exit_code == 0, r.output
    assert "greedy search" in r.stdout and "no placement can beat" in r.stdout
    r = CliRunner().invoke(routers_cmd, [site, "-s", "projection", "--format", "json"])
    data = json.loads(r.stdout)
    assert data["method"] == "exact" and data["before"]["aggregate_mb_s"] is not None
    r = CliRunner().invoke(routers_cmd, [str(SITES / "wolf.yaml")])
    assert r.exit_code == 2 and "needs a torus" in r.output and "Traceback" not in r.output


def test_advise_routers_says_the_linear_rule_relays_clients(tmp_path: Path) -> None:
    """Journey B: ``rtr03 coords [5,3,7] -> [5,1,1]`` onto a chip that held two clients; the
    edited inventory validates only because the linear rule (``skip_routers``) lays every
    client around the routers again.  The advice says how many clients change chip, and the
    first and last of them, as loading the edited inventory finds them."""
    import numpy as np

    from lnetgen.cli.advise import routers_cmd
    from lnetgen.inventory import load_site

    path = _demo_with_slots(tmp_path, "[[1, 2, 1], [3, 0, 3]]")
    site = load_site(path)[0]
    job = [
        n
        for n, c in zip(site.clients.names, site.clients.coords, strict=True)
        if tuple(c) == (1, 2, 1)
    ]
    from lnetgen import nodes

    wl = f"filesystems=scratch,ranks=2,nodes={nodes.fold(job)},osts=4-5"
    r = CliRunner().invoke(routers_cmd, [path, "-s", "projection", "--workload", wl])
    assert r.exit_code == 0, r.output
    assert "rtr02).coords: [2, 0, 0] -> [1, 2, 1]" in r.stdout
    # the edit made by hand: which clients does the inventory put on another chip?
    text = Path(path).read_text()
    at = text.index("coords: [2, 0, 0]", text.index("name: rtr02"))
    moved = tmp_path / "moved.yaml"
    moved.write_text(text[:at] + "coords: [1, 2, 1]" + text[at + len("coords: [2, 0, 0]") :])
    after = load_site(str(moved))[0]
    changed = np.nonzero((site.clients.coords != after.clients.coords).any(axis=1))[0]
    first, last = site.clients.names[changed[0]], site.clients.names[changed[-1]]
    assert f"{len(changed)} of them ({first} to {last}) change chip" in r.stdout, r.stdout
    assert "the prediction keeps every client where it is now" in r.stdout
    r = CliRunner().invoke(
        routers_cmd, [path, "-s", "projection", "--workload", wl, "--format", "json"]
    )
    data = json.loads(r.stdout)
    assert (data["relaid"], data["relaid_span"]) == (len(changed), [first, last])
    # the job's own node is among them: the prediction (made with it where it is now) does not
    # hold for the edited inventory, and the advice says so (it said nothing)
    ours = [site.clients.names[i] for i in changed if site.clients.names[i] in job]
    assert ours and data["relaid_job"] == ours
    r = CliRunner().invoke(routers_cmd, [path, "-s", "projection", "--workload", wl])
    assert f"{len(ours)} of the workload's own nodes ({', '.join(ours)}) change chip" in r.stdout


def test_advise_routers_skips_full_slots_of_fixed_coordinates() -> None:
    """With a coordinates CSV the clients stay put: a slot whose chip its clients fill is no
    free slot (the edit would be E-TORUS-FULL; validate warns W-SLOT-CLIENTS about it)."""
    from lnetgen.api import advise_routers
    from lnetgen.throughput import parse_inline

    case = Path(__file__).resolve().parent / "cases" / "invalid" / "slot-clients" / "site.yaml"
    a, warnings = advise_routers(str(case), parse_inline("nodes=linear"))
    assert a.slots == 2 and a.relaid == 0  # [2,0,0] and [2,1,1]; not [0,1,0]
    assert [w.path for w in warnings if w.code == "W-SLOT-CLIENTS"] == [
        "$.topology.router_slots[1]",
        "$.topology.router_slots[2]",
    ]
    assert all(m.new != (0, 1, 0) for m in a.moves)
