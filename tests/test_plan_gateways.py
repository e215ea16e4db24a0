"""A reviewed plan read with ``--plan`` passes the guarantees ``lnetgen solve`` proves on every
plan it returns: a route through a gateway that is no router's NID, or through a router without
an interface on the net it routes to, is refused with ``E-PLAN`` at the JSON path (and line and
column) of the gateway, exit 2, in every command that takes ``--plan``.  ``generate --plan``
used to write client routes through ``999@gni`` (exit 0, no warning) and drop
``lnet_drop_asym_route`` from modprobe.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from lnetgen.cli import main
from lnetgen.strategies import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "sites" / "demo.yaml")

Doc = dict[str, Any]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Doc:
    """The demo's projection plan: rtr01 (201@gni) has NIs on gni and o2ib100 only."""
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    assert run("solve", DEMO, "--out", str(path)).exit_code == 0
    doc: Doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["route_sets"][0]["routes"][0]["gateway"] == "201@gni"
    assert doc["route_sets"][1]["net"] == "o2ib101"
    return doc


def _edited(tmp_path: Path, solved: Doc, edit: Callable[[Doc], object]) -> Path:
    doc = copy.deepcopy(solved)
    edit(doc)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


COMMANDS: dict[str, tuple[str, ...]] = {
    "generate": ("generate", DEMO, "--out", "OUT"),
    "diff": ("diff", DEMO, "--live", str(ROOT / "tests" / "fixtures" / "live" / "demo")),
    "analyze": ("analyze", DEMO),
    "place osts": ("place", "osts", DEMO, "--client", "nid00001"),
    "place clients": ("place", "clients", DEMO, "--oss", "oss01"),
    "advise stripes": ("advise", "stripes", DEMO),
    "advise routers": ("advise", "routers", DEMO),
}


def _refused(
    plan: Path, where: str, said: str, *extra: str, commands: tuple[str, ...] = ()
) -> None:
    out = plan.parent / "out"
    for name in commands or tuple(COMMANDS):
        argv = [str(out) if a == "OUT" else a for a in COMMANDS[name]]
        r = run(*argv, "--plan", str(plan), *extra)
        assert r.exception is None or isinstance(r.exception, SystemExit), (name, r.exception)
        assert r.exit_code == 2, (name, r.output)
        head = re.escape(f"{plan}:") + r"[1-9]\d*:[1-9]\d*: " + re.escape(f"error[E-PLAN] {where}:")
        assert re.search(head + ".*" + re.escape(said), r.output), (name, r.output)
    assert not out.exists()


def test_a_gateway_no_router_has_is_refused_in_every_command(demo: Doc, tmp_path: Path) -> None:
    def edit(d: Doc) -> None:
        d["route_sets"][0]["routes"][0]["gateway"] = "999@gni"

    _refused(
        _edited(tmp_path, demo, edit),
        "$.route_sets[0].routes[0].gateway",
        "gateway 999@gni is not a router NID",
    )


def test_a_router_without_an_interface_on_the_target_net_is_refused(
    demo: Doc, tmp_path: Path
) -> None:
    """rtr01 is a router, on gni, but has no NI on o2ib101: clients would send o2ib101's
    traffic to a router that cannot forward it."""

    def edit(d: Doc) -> None:
        d["route_sets"][1]["routes"][0]["gateway"] = "201@gni"

    _refused(
        _edited(tmp_path, demo, edit),
        "$.route_sets[1].routes[0].gateway",
        "symmetry: gateway rtr01 lacks an interface on o2ib101",
        commands=("generate", "analyze"),
    )


def test_a_server_route_through_no_router_is_refused(demo: Doc, tmp_path: Path) -> None:
    def edit(d: Doc) -> None:
        d["server_routes"][0]["routes"][-1]["gateway"] = "10.10.0.99@o2ib100"

    last = len(demo["server_routes"][0]["routes"]) - 1
    _refused(
        _edited(tmp_path, demo, edit),
        f"$.server_routes[0].routes[{last}].gateway",
        "gateway 10.10.0.99@o2ib100 is not a router NID",
        commands=("generate", "diff"),
    )


def test_a_forced_stale_plan_is_checked_too(demo: Doc, tmp_path: Path) -> None:
    def edit(d: Doc) -> None:
        d["inventory_digest"] = "0" * 64
        d["route_sets"][0]["routes"][0]["gateway"] = "999@gni"

    _refused(
        _edited(tmp_path, demo, edit),
        "$.route_sets[0].routes[0].gateway",
        "gateway 999@gni is not a router NID",
        "--force",
        commands=("generate", "analyze"),
    )


@pytest.mark.parametrize("strategy", sorted(REGISTRY))
def test_every_strategy_s_plan_is_used_as_solved(strategy: str, tmp_path: Path) -> None:
    """The proof refuses nothing lnetgen writes (baseline's gateways are off the storage
    leaf: its plan is checked without leaf locality, as the solver checks it)."""
    plan, out = tmp_path / "plan.json", tmp_path / "out"
    assert run("solve", DEMO, "-s", strategy, "--out", str(plan)).exit_code == 0
    r = run("generate", DEMO, "--plan", str(plan), "--out", str(out))
    assert r.exit_code == 0, r.output
