"""UDSP router rules next to route priorities (``lustre: {udsp: true}``): the rules, their
YAML as ``lnetctl export`` prints it and ``lnetctl import`` takes it, the live reader, diff's
steps, verify's ranking, and the release check."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from lnetgen.cli import main
from lnetgen.diagnostics import InputError
from lnetgen.inventory import load_site
from lnetgen.live.cache import ParseCache
from lnetgen.live.lnetctl import parse_yaml
from lnetgen.plan import Route
from lnetgen.udsp import Rule, matches, router_rules, rte_ranges, yaml_block

SITES = Path(__file__).resolve().parent.parent / "sites"


def demo_udsp(tmp: Path, version: str = "2.15.6") -> Path:
    path = tmp / "demo-udsp.yaml"
    path.write_text(
        (SITES / "demo.yaml").read_text() + f'\nlustre: {{version: "{version}", udsp: true}}\n'
    )
    return path


def run(args: list[str]) -> object:
    return CliRunner().invoke(main, args)


def test_router_rules_prefer_the_best_priority() -> None:
    """Nearest-neighbor's table: one gateway at 0, the set's others at 1 -> one rule; a net
    at one priority only -> none; group gateways -> one range."""
    routes = [
        Route("o2ib1", "5@gni", 1, 1),
        Route("o2ib1", "4@gni", 1, 0),
        Route("o2ib1", "6@gni", 1, 1),
        Route("o2ib2", "7@gni", 1, 0),
        Route("o2ib3", "10.0.0.1@tcp", 1, 0),
        Route("o2ib3", "10.0.0.2@tcp", 1, 0),
        Route("o2ib3", "10.0.1.9@tcp", 1, 1),
    ]
    assert router_rules(routes) == [Rule("o2ib1", "4@gni"), Rule("o2ib3", "10.0.0.[1-2]@tcp")]


@given(st.sets(st.integers(0, 300), min_size=1, max_size=12))
def test_rte_ranges_cover_exactly_their_gateways(nums: set[int]) -> None:
    gws = [f"10.1.2.{n % 256}@o2ib" for n in nums] + [f"{n}@gni" for n in nums]
    ranges = rte_ranges(gws)
    for n in range(0, 301):
        for g in (f"10.1.2.{n % 256}@o2ib", f"{n}@gni"):
            want = g in gws
            assert any(matches(r, g) for r in ranges) == want, (g, ranges)


def test_yaml_block_is_what_lnetctl_export_prints_and_import_takes() -> None:
    text = yaml_block([Rule("o2ib1", "4@gni"), Rule("o2ib2", "[7-8]@gni")])
    data = yaml.safe_load(text)
    assert data == {
        "udsp": [
            {"idx": 0, "dst": "o2ib1", "rte": "4@gni", "action": {"priority": 1}},
            {"idx": 1, "dst": "o2ib2", "rte": "[7-8]@gni", "action": {"priority": 1}},
        ]
    }
    # the netlink import adds a rule when a mapping ends with idx set: idx comes first and
    # action last; priority 0 would be read as no action and refused
    for item in text.split("    - ")[1:]:
        keys = [line.strip().split(":")[0] for line in item.splitlines()]
        assert keys[0] == "idx" and keys[-2:] == ["action", "priority"]
    assert "priority: 0" not in text


@pytest.mark.parametrize("strategy", ["nearest-neighbor", "groups", "round-robin"])
def test_generate_diff_verify_round_trip(tmp_path: Path, strategy: str) -> None:
    """Nearest-neighbor and round-robin prefer one gateway per net, groups their four in one
    quoted range ("[a-b]@gni"): every shape goes through generate, the reader, verify and diff."""
    site = demo_udsp(tmp_path)
    out = tmp_path / "out"
    r = run(["generate", str(site), "-s", strategy, "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    files = sorted((out / "lnetctl").glob("clients-*.yaml"))
    assert files
    for f in files:
        data = yaml.safe_load(f.read_text())
        assert list(data)[-1] == "udsp"  # printed last, as lnetctl export does
        state = parse_yaml(f.read_bytes(), str(f), ParseCache())
        assert state.routes is not None and state.udsp is not None
        levels: dict[str, set[int]] = {}
        for (net, _g), (_h, p) in state.routes.routes.items():
            levels.setdefault(net, set()).add(p)
        assert {r.dst for r in state.udsp} == {n for n, ps in levels.items() if len(ps) > 1}
        for rule in state.udsp:  # each prefers the class's priority-0 gateway of that net
            best = [
                g for (net, g), (_h, p) in state.routes.routes.items() if net == rule.dst and p == 0
            ]  # type: ignore[union-attr]
            assert [g for g in best if matches(rule.rte, g)] == best
    # router files carry none
    assert "udsp:" not in (out / "lnetctl" / "rtr01.yaml").read_text()
    r = run(["verify", str(out)])
    assert r.exit_code == 0 and "0 warning(s)" in r.output, r.output
    r = run(["diff", str(site), "-s", strategy, "--live", str(out)])
    assert r.exit_code == 0 and "live state equals the plan" in r.output, r.output


def test_diff_plans_udsp_steps_and_verify_warns(tmp_path: Path) -> None:
    site = demo_udsp(tmp_path)
    out = tmp_path / "out"
    assert (
        run(["generate", str(site), "-s", "nearest-neighbor", "--out", str(out), "-q"]).exit_code
        == 0
    )  # type: ignore[attr-defined]
    live = tmp_path / "live"
    shutil.copytree(out, live)
    f = sorted((live / "lnetctl").glob("clients-*.yaml"))[0]
    data = yaml.safe_load(f.read_text())
    first = data["udsp"][0]
    text = f.read_text().replace(f"rte: {first['rte']}", "rte: 999@gni", 1)
    f.write_text(text)
    r = run(["diff", str(site), "-s", "nearest-neighbor", "--live", str(live), "--plan-changes"])
    assert r.exit_code == 1, r.output
    assert f"+ udsp --dst {first['dst']} --rte {first['rte']} --priority 1" in r.output
    assert f"- udsp --dst {first['dst']} --rte 999@gni --priority 1 (idx 0)" in r.output
    assert "lnetctl udsp del --idx 0" in r.output
    # the rte range is a glob pattern to a shell: quoted, once for the remote shell, once for clush
    add = f"lnetctl udsp add --dst {first['dst']} --rte {shlex.quote(first['rte'])} --priority 1"
    assert shlex.quote(add) in r.output
    j = json.loads(
        run(
            ["diff", str(site), "-s", "nearest-neighbor", "--live", str(live), "--format", "json"]
        ).stdout
    )  # type: ignore[attr-defined]
    assert "udsp" in json.dumps(j)
    r = run(["verify", str(live)])
    assert "V-UDSP-NO-ROUTE" in r.output and r.exit_code == 0  # a warning: the routes still work


def test_udsp_needs_2_15_clients(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        load_site(str(demo_udsp(tmp_path, "2.14.0")))
    codes = [d.code for d in exc.value.diagnostics]
    assert "E-LUSTRE-UDSP" in codes
    site = load_site(str(demo_udsp(tmp_path, "2.15.0")))[0]
    assert site.lustre.udsp


def test_without_udsp_nothing_changes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run(["generate", str(SITES / "demo.yaml"), "--out", str(out), "-q"]).exit_code == 0  # type: ignore[attr-defined]
    assert not any("udsp:" in f.read_text() for f in (out / "lnetctl").glob("*.yaml"))


@pytest.mark.parametrize("strategy", ["nearest-neighbor", "groups"])
def test_ansible_role_writes_the_rules(tmp_path: Path, strategy: str) -> None:
    """A host deployed with the Ansible role gets the same /etc/lnet.conf as lnetctl/, rules
    included (the role once wrote the routes alone, and the next diff planned `udsp add`)."""
    from test_ansible import role_render, vars_for

    from lnetgen import nodes
    from lnetgen.api import generate

    gen = generate(str(demo_udsp(tmp_path)), strategy)
    hv = vars_for(gen)
    with_rules = 0
    for f in gen.files:
        if f.path.startswith("lnetctl/"):
            host = nodes.expand(f.hosts)[0]
            assert role_render(gen, "lnet.conf.j2", hv[host]) == f.content, f.path
            with_rules += "\nudsp:\n" in f.content
    assert with_rules


def test_plan_changes_quote_a_udsp_range_for_the_shell() -> None:
    """``10.0.0.[1-4]@o2ib`` is a glob to a shell: unquoted, a file of that name in the remote
    directory would replace it."""
    from types import SimpleNamespace

    from lnetgen.diff.steps import _udsp_adds

    rule = SimpleNamespace(src="", dst="o2ib1", rte="10.0.0.[1-4]@o2ib", priority=0)
    (cmd,) = _udsp_adds(SimpleNamespace(add_udsp=[rule]))  # type: ignore[arg-type]
    assert cmd == "lnetctl udsp add --dst o2ib1 --rte '10.0.0.[1-4]@o2ib' --priority 0"
    assert shlex.split(cmd)[6] == "10.0.0.[1-4]@o2ib"
