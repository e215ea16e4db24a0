"""``lnetgen diff``: a plan against live dumps, per host, folded; safe change order; exit codes."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import demo_next_pairing

from lnetgen import nodes
from lnetgen.api import generate, solve_site, write_output
from lnetgen.cli.diff import command
from lnetgen.diff import (
    CLIENT,
    ROUTER,
    SERVER,
    DiffResult,
    Expected,
    Group,
    HostDiff,
    diff,
    format_steps,
    format_text,
    plan_changes,
    to_dict,
)
from lnetgen.live import HostState, LiveSet, NetTable, RouteTable, read_live
from lnetgen.model import Site
from lnetgen.plan import Plan

ROOT = Path(__file__).resolve().parent.parent
DEMO_SITE = demo_next_pairing()  # the pairing the live dumps were taken with
BLUEWATERS = ROOT / "sites" / "bluewaters.yaml"
FIX = Path(__file__).resolve().parent / "fixtures" / "live"


@cache
def demo() -> tuple[Site, Plan]:
    site, plan, _w = solve_site(str(DEMO_SITE))
    return site, plan


@pytest.fixture(scope="module")
def demo_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "out"
    write_output(generate(str(DEMO_SITE), None, "lnetctl,routes"), str(out))
    return out


def run(*args: str) -> Result:
    return CliRunner().invoke(command, list(args))


def changed_site(tmp_path: Path, src: Path, old: str, new: str) -> Path:
    text = src.read_text()
    assert text.count(old) == 1, old
    path = tmp_path / src.name
    path.write_text(text.replace(old, new))
    return path


def hosts_of(doc: dict[str, object]) -> str:
    groups = doc["groups"]
    assert isinstance(groups, list)
    return nodes.fold(n for g in groups for n in nodes.expand(g["hosts"]))


# ----------------------------------------------------------------------------- end to end


def test_generated_output_against_itself_is_clean(demo_tree: Path) -> None:
    r = run(str(DEMO_SITE), "--live", str(demo_tree))
    assert r.exit_code == 0, r.output
    assert "130 hosts compared: 130 equal, 0 differ; 0 missing, 0 unknown" in r.output
    assert r.output.rstrip().endswith("live state equals the plan")
    r = run(str(DEMO_SITE), "--live", str(demo_tree), "--plan-changes")
    assert r.exit_code == 0 and "# nothing to change" in r.output


def test_router_storage_ip_change_reports_exactly_the_affected_hosts(
    demo_tree: Path, tmp_path: Path
) -> None:
    site = changed_site(tmp_path, DEMO_SITE, "ip: 10.10.0.5,", "ip: 10.10.0.99,")
    r = run(str(site), "--live", str(demo_tree), "--format", "json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    _s, plan = demo()
    affected = sorted(
        s
        for s, routes in plan.routes_for_server().items()
        if any(rt.gateway.startswith("10.10.0.5@") for rt in routes)
    )
    # the moved router itself (its NID, recorded in the tree's manifest) and its servers
    assert hosts_of(doc) == nodes.fold([*affected, "rtr05"]) == "oss[01-06],rtr05"
    assert [g["hosts"] for g in doc["groups"]] == ["rtr05", "oss[01-03]", "oss[04-06]"]
    assert doc["groups"][0]["nids"] == [
        {"net": n, "live": [f"10.10.0.5@{n}"], "inventory": f"10.10.0.99@{n}"}
        for n in ("o2ib100", "o2ib101")
    ]
    g = doc["groups"][1]
    assert g["add_routes"] == [
        {"net": "gni", "gateway": "10.10.0.99@o2ib100", "hop": 1, "priority": 1}
    ]
    assert g["remove_routes"] == [
        {"net": "gni", "gateway": "10.10.0.5@o2ib100", "hop": 1, "priority": 1}
    ]
    assert doc["summary"] == {
        "compared": 130,
        "equal": 123,
        "differ": 7,
        "missing": 0,
        "unknown": 0,
        "unreadable": 0,
    }


def test_router_client_nid_change_folds_all_clients(demo_tree: Path, tmp_path: Path) -> None:
    site = changed_site(tmp_path, DEMO_SITE, 'nid: "205@gni"', 'nid: "299@gni"')
    r = run(str(site), "--live", str(demo_tree))
    assert r.exit_code == 1
    assert "nid[00001-00096] (client, 96 hosts)" in r.output
    assert "+ route o2ib101 via 299@gni hop 1 priority 0" in r.output
    assert "- route o2ib101 via 205@gni hop 1 priority 0" in r.output
    assert "rtr05 (router, 1 host)\n  ! nid on gni: live 205@gni, inventory 299@gni" in r.output
    assert "124 equal" not in r.output and "33 equal, 97 differ" in r.output


def test_json_and_plan_changes(demo_tree: Path, tmp_path: Path) -> None:
    site = changed_site(tmp_path, DEMO_SITE, "ip: 10.10.0.5,", "ip: 10.10.0.99,")
    r = run(str(site), "--live", str(demo_tree), "--format", "json", "--plan-changes")
    doc = json.loads(r.stdout)
    steps = [(s["step"], s["title"], s["hosts"]) for s in doc["steps"]]
    # drained first (its nets keep other gateways), readdressed, given its new routes, and
    # only then chosen again
    assert steps == [
        (1, "drain routers whose peers keep other gateways", "rtr05"),
        (2, "fix interface addresses on routers and clients (outside LNet)", "rtr05"),
        (3, "add routes through the new addresses on servers", "oss[01-03]"),
        (3, "add routes through the new addresses on servers", "oss[04-06]"),
        (4, "remove routes through the old addresses on servers", "oss[01-03]"),
        (4, "remove routes through the old addresses on servers", "oss[04-06]"),
        (5, "re-enable routing on drained routers", "rtr05"),
    ]
    assert [s["live"] for s in doc["steps"]] == [True, False, True, True, True, True, True]


@pytest.mark.parametrize(
    "args",
    [
        ("{missing_site}", "--live", "{tree}"),
        ("{demo}", "--live", "{missing_dir}"),
        ("{demo}", "--live", "{empty_dir}"),
        ("{demo}", "--strategy", "nonsense", "--live", "{tree}"),
        ("{demo}",),
    ],
)
def test_bad_input_exits_2(args: tuple[str, ...], demo_tree: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    values = {
        "missing_site": str(tmp_path / "nope.yaml"),
        "tree": str(demo_tree),
        "demo": str(DEMO_SITE),
        "missing_dir": str(tmp_path / "absent"),
        "empty_dir": str(tmp_path / "empty"),
    }
    r = run(*(a.format(**values) for a in args))
    assert r.exit_code == 2, r.output


def test_bad_inventory_exits_1(tmp_path: Path, demo_tree: Path) -> None:
    """An invalid inventory is a finding in every command (it exited 2 in diff)."""
    site = changed_site(tmp_path, DEMO_SITE, "ip: 10.10.0.5,", 'ip: "10.10.0.5; rm -rf /",')
    r = run(str(site), "--live", str(demo_tree))
    assert r.exit_code == 1


# ----------------------------------------------------------------------------- fixtures


def test_every_format_of_the_demo_fixtures_equals_the_plan() -> None:
    site, plan = demo()
    result = diff(plan, read_live(str(FIX / "demo")), site)
    assert result.groups == [] and result.errors == [] and result.unknown == []
    assert result.equal == "nid[00001-00004],oss[01-05],rtr[01-04]"
    assert result.missing == "mds[01-02],nid[00005-00096],oss[06-12],rtr[05-20]"
    assert result.exit_code == 1  # missing hosts are not silently skipped
    notes = {note: hosts for hosts, _n, note in result.health}
    assert (
        notes[
            "route to gni via 10.10.0.5@o2ib100 is listed under 10.10.0.5@o2ib101 "
            "(another NID of the same router)"
        ]
        == "oss01"
    )
    assert notes["not in the dump, not compared: networks, tunables"] == "nid00004,oss04"


@cache
def drift() -> DiffResult:
    site, plan = demo()
    return diff(plan, read_live(str(FIX / "drift")), site)


def test_drift_fixtures() -> None:
    result = drift()
    by_hosts = {g.hosts: g.diff for g in result.groups}
    assert list(by_hosts) == ["rtr05", "rtr06", "oss07", "nid[00010-00011]"]
    rtr05 = by_hosts["rtr05"]
    assert rtr05.add_nets == (("o2ib101", ("ib0",)),)
    assert rtr05.remove_nets == (("o2ib300", ("ib0",)),)
    assert rtr05.routing == "enable"
    rtr06 = by_hosts["rtr06"]
    assert rtr06.change_nets == (("o2ib101", ("ib1",), ("ib0",)),)
    assert rtr06.nids == (("o2ib100", ("10.10.0.66@o2ib100",), "10.10.0.6@o2ib100"),)
    oss07 = by_hosts["oss07"]
    assert oss07.add_routes == (("gni", "10.10.0.4@o2ib102", 1, 1),)
    assert oss07.remove_routes == (("gni", "10.10.0.20@o2ib102", 1, 1),)
    assert oss07.change_routes == tuple(
        ("gni", f"10.10.0.{i}@o2ib102", -1, 0, 1, 0) for i in range(9, 13)
    )
    clients = by_hosts["nid[00010-00011]"]
    assert {r[0] for r in clients.add_routes} == {"o2ib201"} and len(clients.add_routes) == 6
    assert clients.change_routes == (
        ("o2ib200", "217@gni", 1, 2, 1, 1),
        ("o2ib200", "219@gni", 1, 2, 1, 1),
    )
    assert [h for h, _f in result.unknown] == ["login01"]
    assert result.error_hosts == "nid00012,oss[08-09]"
    assert [(Path(d.file).name, d.line) for d in result.errors] == [
        ("nid00012.txt", 5),
        ("oss08.yaml", 12),
        ("oss09.conf", 4),
    ]
    assert result.exit_code == 1
    text = format_text(result)
    assert "unknown (live dump, not in the plan): login01" in text
    assert "oss09.conf:4:41: error[E-LIVE-PARSE] $: host oss09: routes=" in text
    assert "~ route gni via 10.10.0.9@o2ib102: hop -1 -> 1" in text


def test_change_order_is_safe() -> None:
    steps = plan_changes(drift())
    titles = [s.title for s in steps]

    def first(title: str) -> int:
        return next(i for i, t in enumerate(titles) if t.startswith(title))

    assert (
        first("add networks on routers")
        < first("enable routing on routers")
        < first("add routes on servers")
        < first("add routes on clients")
        < first("replace changed routes")
        < first("drain routers")
        < first("remove old routes on servers")
        < first("remove old routes and networks on routers")
        < first("fix interface addresses on routers")
        < first("re-enable routing on drained routers")
    )
    by = {(s.title.split(" (")[0], s.hosts): s.commands for s in steps}
    # rtr05 does not forward yet: enabled once its new net is there, nothing to drain
    assert by[("enable routing on routers", "rtr05")] == ("lnetctl set routing 1",)
    # rtr06 loses an interface and its address: its nets keep other gateways, so it is drained
    # (and waited for) before, and enabled again after
    drain = by[("drain routers whose peers keep other gateways", "rtr06")]
    assert drain[0] == "lnetctl set routing 0" and drain[1].startswith("# then wait")
    assert by[("remove old routes and networks on routers", "rtr06")] == (
        "lnetctl net del --net o2ib101 --if ib1",
    )
    assert by[("re-enable routing on drained routers", "rtr06")] == ("lnetctl set routing 1",)
    assert by[("remove old routes and networks on routers", "rtr05")] == (
        "lnetctl net del --net o2ib300",
    )
    assert by[("add networks on routers", "rtr[05-06]")] == (
        "lnetctl net add --net o2ib101 --if ib0",
    )
    replaced = by[("replace changed routes", "oss07")]
    assert replaced[:2] == (
        "lnetctl route del --net gni --gateway 10.10.0.9@o2ib102",
        "lnetctl route add --net gni --gateway 10.10.0.9@o2ib102 --hop 1 --priority 0",
    )
    text = format_steps(steps, drift())
    assert "# not planned (no usable live state): missing" in text
    assert to_dict(drift(), steps)["steps"][0]["step"] == 1


def test_routing_enabled_on_a_client_is_disabled_after_routes_and_not_reenabled() -> None:
    """Disabled once no route goes through it (it was drained before the routes went)."""
    d = HostDiff(CLIENT, routing="disable")
    gone = HostDiff(CLIENT, remove_routes=(("o2ib1", "9@gni", 1, 0),))
    result = DiffResult("s", "x", "p", groups=[Group("c1", 1, d), Group("c2", 1, gone)])
    steps = plan_changes(result)
    assert [(s.title.split(" ")[0], s.hosts, s.commands) for s in steps] == [
        ("remove", "c2", ("lnetctl route del --net o2ib1 --gateway 9@gni",)),
        ("disable", "c1", ("lnetctl set routing 0",)),
    ]


def test_unknown_parts_are_not_compared() -> None:
    _site, plan = demo()
    live = LiveSet("p", hosts={"oss01": HostState(routes=RouteTable({}, detailed=False))})
    result = diff(plan, live)
    (g,) = result.groups
    assert g.hosts == "oss01" and len(g.diff.add_routes) == 8 and not g.diff.change_routes
    assert ("oss01", 1, "not in the dump, not compared: networks, routing, tunables") in (
        result.health
    )


def test_hop_priority_change_only_when_details_shown() -> None:
    _site, plan = demo()
    want = {(r.net, r.gateway): (r.hop, r.priority) for r in plan.routes_for_server()["oss01"]}
    wrong = {k: (-1, 7) for k in want}
    for detailed, changes in ((True, 8), (False, 0)):
        live = LiveSet(
            "p",
            hosts={
                "oss01": HostState(
                    NetTable({"o2ib100": ("ib0",)}), RouteTable(wrong, detailed), False
                )
            },
        )
        (g,) = diff(plan, live).groups if changes else [Group("", 0, HostDiff(SERVER))]
        assert len(g.diff.change_routes) == changes


def test_expected_roles_and_shared_client_state() -> None:
    site, plan = demo()
    from lnetgen.diff import expected_states

    exp = expected_states(plan, site)
    assert len(exp) == 130
    assert exp["rtr01"].role == ROUTER and exp["rtr01"].routing is True
    assert exp["oss01"].role == SERVER and exp["oss01"].nids == {
        "o2ib100": "10.10.1.1@o2ib100",
        "o2ib": "10.10.1.1@o2ib",
    }
    a, b = exp["nid00001"], exp["nid00096"]
    assert isinstance(a, Expected) and a.routes is b.routes and a.nids == {"gni": "1@gni"}


# ----------------------------------------------------------------------------- Blue Waters


@pytest.mark.skipif(not BLUEWATERS.exists(), reason="sites/bluewaters.yaml not present")
def test_bluewaters_one_router_moved(tmp_path: Path) -> None:
    gen = generate(str(BLUEWATERS), None, "lnetctl")
    write_output(gen, str(tmp_path / "out"))
    router = gen.plan.routers[0]
    old_ip = router.interfaces[1].nid.split("@")[0]
    m = re.search(rf"ip: {re.escape(old_ip)},", BLUEWATERS.read_text())
    assert m is not None
    site = changed_site(tmp_path, BLUEWATERS, m.group(0), "ip: 10.250.0.1,")
    r = run(str(site), "--live", str(tmp_path / "out"), "--format", "json")
    assert r.exit_code == 1, r.output[-2000:]
    doc = json.loads(r.stdout)
    affected = sorted(
        s
        for s, routes in gen.plan.routes_for_server().items()
        if any(rt.gateway.startswith(old_ip + "@") for rt in routes)
    )
    assert affected and hosts_of(doc) == nodes.fold([*affected, router.name])
    assert doc["summary"]["missing"] == 0 and doc["summary"]["unknown"] == 0
    assert doc["summary"]["compared"] == 25712 + len(gen.plan.routers) + len(gen.plan.servers)


def test_dump_named_after_no_host_is_unreadable_not_folded(tmp_path: Path) -> None:
    """``rtr[01.yaml`` (an unbalanced node set) and a newline in a name: listed as unreadable
    dumps, escaped, never parsed as node sets."""
    live_dir = tmp_path / "live"
    live_dir.mkdir()
    dump = (FIX / "demo" / "oss03.conf").read_bytes()
    for name in ("oss03.conf", "rtr[01.yaml", "rtr02\n.yaml", "login\x1b[2J.yaml"):
        (live_dir / name).write_bytes(dump)
    r = run(str(DEMO_SITE), "--live", str(live_dir))
    assert r.exit_code == 1 and not isinstance(r.exception, Exception), r.output
    assert "Traceback" not in r.output and "\x1b" not in r.output
    assert "3 unreadable dumps" in r.output and "unreadable dumps:\n" in r.output
    assert "rtr[01.yaml: error[E-LIVE-NAME] $: not read: 'rtr[01' is not a host name" in r.output
    assert "rtr02\\n.yaml: error[E-LIVE-NAME]" in r.output
    assert "login\\x1b[2J.yaml: error[E-LIVE-NAME]" in r.output
    doc = json.loads(run(str(DEMO_SITE), "--live", str(live_dir), "--format", "json").output)
    assert [e["code"] for e in doc["errors"]] == ["E-LIVE-NAME"] * 3
    assert doc["unknown"] == []


def test_odd_host_names_in_a_live_set_are_listed_not_folded() -> None:
    """A ``LiveSet`` built by other code may hold any name: it is shown escaped."""
    _site, plan = demo()
    state = HostState(routes=RouteTable({}, detailed=False))
    live = LiveSet("p", hosts={"a[1": state, "login01": state}, error_hosts={"b\n1", "rtr99"})
    result = diff(plan, live)
    assert result.error_hosts == "rtr99, 'b\\n1'"
    text = format_text(result)
    assert "unknown (live dump, not in the plan): login01,rtr99, 'a[1', 'b\\n1'\n" in text
    assert "\n  'b\\n1': \n" in text and "\n  'a[1': \n" in text
