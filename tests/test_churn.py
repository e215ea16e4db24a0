"""Churn between two inventories of a site (``compare --since``)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from click.testing import CliRunner
from conftest import ROOT

from lnetgen.analyze.churn import churn
from lnetgen.api import solve_site
from lnetgen.cli import main

DEMO = ROOT / "sites" / "demo.yaml"


def grown_demo(tmp: Path) -> Path:
    """The demo with one more leaf, core1/L03: 4 routers and 3 scratch OSS (OSTs 36-47)."""
    rtrs = "".join(
        f"  - name: rtr{21 + i}\n"
        f'    client: {{nid: "{221 + i}@gni", interface: ipogif0}}\n'
        f"    storage: {{ip: 10.10.0.{21 + i}, interface: ib0, "
        f'guid: "0x0002c90300a000{0x15 + i:02x}"}}\n'
        f"    attach: {{switch: core1, leaf: L03, port: {1 + i}}}\n"
        f"    coords: [{(i * 2) % 4}, {3 - i}, 3]\n"
        for i in range(4)
    )
    srvs = "".join(
        f"  - name: oss{13 + i}\n    role: oss\n    fs: scratch\n    ip: 10.10.1.{13 + i}\n"
        f'    interface: ib0\n    guid: "0x0002c90300b000{0x0D + i:02x}"\n'
        f"    attach: {{switch: core1, leaf: L03, port: {5 + i}}}\n"
        f'    osts: "{36 + 4 * i}-{39 + 4 * i}"\n'
        for i in range(3)
    )
    text = DEMO.read_text().replace("\nservers:\n", "\n" + rtrs + "\nservers:\n" + srvs, 1)
    path = tmp / "demo-grown.yaml"
    path.write_text(text)
    return path


def test_same_plan_has_no_churn() -> None:
    _, plan, _ = solve_site(str(DEMO), "groups")
    c = churn(plan, plan)
    assert (c.clients, c.changed, c.routes_changed, c.added_clients) == (96, 0, 0, 0)


def test_a_changed_priority_is_two_routes_for_every_member() -> None:
    _, plan, _ = solve_site(str(DEMO), "round-robin")
    cc = plan.client_classes[0]
    r0 = dataclasses.replace(cc.routes[0], priority=cc.routes[0].priority + 7)
    first = dataclasses.replace(cc, routes=(r0, *cc.routes[1:]))
    edited = dataclasses.replace(plan, client_classes=(first, *plan.client_classes[1:]))
    c = churn(plan, edited)
    assert (c.changed, c.routes_changed) == (cc.count, 2 * cc.count)


def test_baseline_growth_only_adds_the_new_routers(tmp_path: Path) -> None:
    """Baseline: every router on one net, so the new leaf adds its 4 routers to every table
    and changes nothing else."""
    _, old, _ = solve_site(str(DEMO), "baseline")
    _, new, _ = solve_site(str(grown_demo(tmp_path)), "baseline")
    c = churn(old, new)
    assert (c.clients, c.changed, c.routes_per_client, c.mean_routes) == (96, 96, 4.0, 24.0)


def test_compare_since_prints_and_serialises_the_churn(tmp_path: Path) -> None:
    grown = str(grown_demo(tmp_path))
    args = ["compare", grown, "--since", str(DEMO), "--strategies", "baseline"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert [ln.split() for ln in res.output.splitlines() if ln.startswith("baseline")][-1] == [
        "baseline",
        "96",
        "96",
        "(100%)",
        "4.00",
        "of",
        "24.0",
    ]
    res = CliRunner().invoke(main, [*args, "--format", "json"])
    assert json.loads(res.output)[0]["churn"]["routes_changed"] == 4 * 96


def test_kept_net_numbers_cut_the_churn_of_growth(tmp_path: Path) -> None:
    """--keep-nets: the grown demo keeps every existing net number, the new leaf's nets take
    free ones, and the churn falls to the routes of the new nets (projection 16 -> 4 routes per
    client, round-robin 12 -> 4: the minimum, one new net and its 4 routers)."""
    from lnetgen.solve import kept_nets

    grown = str(grown_demo(tmp_path))
    for strategy, before, after in (("projection", 16.0, 4.0), ("round-robin", 12.0, 4.0)):
        _, old, _ = solve_site(str(DEMO), strategy)
        _, plain, _ = solve_site(grown, strategy)
        _, kept, _ = solve_site(grown, strategy, keep_path=_plan_file(tmp_path, old))
        assert churn(old, plain).routes_per_client == before
        assert churn(old, kept).routes_per_client == after
        old_nets, new_nets = kept_nets(old), kept_nets(kept)
        assert all(new_nets[g] == n for g, n in old_nets.items())
        assert len(set(new_nets.values())) == len(new_nets)


def _plan_file(tmp: Path, plan: object) -> str:
    path = tmp / "deployed-plan.json"
    path.write_text(plan.to_json())  # type: ignore[attr-defined]
    return str(path)


def test_keep_nets_and_plan_are_exclusive(tmp_path: Path) -> None:
    _, old, _ = solve_site(str(DEMO), "projection")
    plan = _plan_file(tmp_path, old)
    args = [
        "generate",
        str(DEMO),
        "--plan",
        plan,
        "--keep-nets",
        plan,
        "--out",
        str(tmp_path / "o"),
    ]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2 and "--keep-nets" in res.output
    res = CliRunner().invoke(main, ["solve", str(DEMO), "-s", "projection", "--keep-nets", plan])
    assert res.exit_code == 0, res.output


def test_compare_on_a_fat_tree_says_na_for_torus_figures() -> None:
    """Wolf's clients are on a fat tree: no torus figure is 0.0, they are not applicable."""
    site = str(ROOT / "sites" / "wolf.yaml")
    res = CliRunner().invoke(main, ["compare", site, "--strategies", "groups"])
    row = next(ln for ln in res.output.splitlines() if ln.startswith("groups"))
    assert row.split()[5:9] == ["n/a"] * 4, row  # "0.0 %" is two words
    res = CliRunner().invoke(main, ["compare", site, "--strategies", "groups", "--format", "json"])
    doc = json.loads(res.stdout)[0]
    assert doc["uniform_write_max"] is None and doc["placed_read_max"] is None
    assert doc["uplink_max"] is not None
