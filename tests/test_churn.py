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
