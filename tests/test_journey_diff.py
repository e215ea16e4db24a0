"""``lnetgen diff`` as two reviewers used it: an earlier generated tree as the live state (a
moved address is a ``! nid`` change with its outage, from the NIDs the tree's manifest
records), and tunables that take effect only when LNet is loaded again (an outage, never
``live``)."""

from __future__ import annotations

import hashlib
import json
import shutil
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lnetgen.api import generate, write_output
from lnetgen.cli.diff import command
from lnetgen.diff import ROUTER, SERVER, DiffResult, Group, HostDiff, format_steps, plan_changes
from lnetgen.diff.outages import ROUTER_NID_OUTAGE, SERVER_NID_OUTAGE
from lnetgen.live import read_live

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "sites" / "demo.yaml"
#: What each role's reload outage must say (its own words, not "live"): LNet unloaded and
#: loaded again, and what goes first.
RELOAD = "the new values take effect only when LNet is unloaded and loaded again"
ROUTER_FIRST = "drain it first (`lnetctl set routing 0`"
SERVER_FIRST = "unmount the targets (or fail them over to the partner) first"
CLIENT_FIRST = "unmount Lustre on these clients first"

TUNED = """tunables:
  peer_credits: 16
  transaction_timeout: 100
  roles:
    router: {peer_credits: 32, credits: 1024}

"""


def run(*args: str) -> Result:
    return CliRunner().invoke(command, list(args))


def site(tmp_path: Path, *edits: tuple[str, str], name: str = "site.yaml") -> Path:
    text = DEMO.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


def tuned(tmp_path: Path, block: str = TUNED, name: str = "tuned.yaml") -> Path:
    return site(tmp_path, ("client_nets:", block + "client_nets:"), name=name)


@cache
def _tree(where: str) -> Path:
    out = Path(where) / "out"
    write_output(generate(str(DEMO), None, "lnetctl,modprobe"), str(out))
    return out


@pytest.fixture(scope="module")
def demo_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tree(str(tmp_path_factory.mktemp("journey")))


def copy_tree(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "tree"
    shutil.copytree(src, dst)
    return dst


def edit_manifest(tree: Path, change: object) -> None:
    path = tree / "manifest.json"
    doc = json.loads(path.read_text())
    change(doc)  # type: ignore[operator]
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


# ------------------------------------------------------------- finding 1: a generated tree's NIDs


def test_a_server_address_edit_against_the_earlier_tree_is_a_file_system_outage(
    demo_tree: Path, tmp_path: Path
) -> None:
    """It printed "live state equals the plan", exit 0: the tree's files carry no address."""
    moved = site(tmp_path, ("ip: 10.10.1.3\n", "ip: 10.10.1.33\n"))
    r = run(str(moved), "--live", str(demo_tree), "--plan-changes")
    assert r.exit_code == 1, r.output
    assert "  ! nid on o2ib100: live 10.10.1.3@o2ib100, inventory 10.10.1.33@o2ib100" in r.output
    assert "oss03 (server, 1 host)\n" in r.output
    assert f"# oss03 (1 host): {SERVER_NID_OUTAGE}" in r.output
    assert "live state equals the plan" not in r.output


def test_a_router_address_edit_lists_the_router_and_its_peers(
    demo_tree: Path, tmp_path: Path
) -> None:
    """Only the servers' route changes were listed, marked live; the router was not."""
    moved = site(tmp_path, ("ip: 10.10.0.5,", "ip: 10.10.0.99,"))
    r = run(str(moved), "--live", str(demo_tree), "--plan-changes", "--format", "json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    (rtr,) = [g for g in doc["groups"] if g["role"] == ROUTER]
    assert rtr["hosts"] == "rtr05"
    assert rtr["nids"] and all(
        n["live"] == [f"10.10.0.5@{n['net']}"] and n["inventory"] == f"10.10.0.99@{n['net']}"
        for n in rtr["nids"]
    )
    drain, readdress = doc["steps"][:2]
    assert drain["hosts"] == readdress["hosts"] == "rtr05" and drain["live"] is True
    assert readdress["live"] is False and readdress["outage"] == ROUTER_NID_OUTAGE
    servers = [g for g in doc["groups"] if g["role"] == SERVER]
    assert servers and all(
        any(a["gateway"].startswith("10.10.0.99@") for a in g["add_routes"]) for g in servers
    )


def test_the_tree_against_its_own_inventory_is_still_equal(demo_tree: Path) -> None:
    r = run(str(DEMO), "--live", str(demo_tree))
    assert r.exit_code == 0 and r.output.rstrip().endswith("live state equals the plan")
    ls = read_live(str(demo_tree))
    nets = ls.hosts["rtr01"].nets
    assert nets is not None and nets.nids["o2ib100"] == ("10.10.0.1@o2ib100",)
    client = ls.hosts["nid00001"].nets
    assert client is not None and not client.nids  # clients are recorded without NIDs


def test_a_file_changed_since_generate_keeps_no_recorded_nids(
    demo_tree: Path, tmp_path: Path
) -> None:
    """Integrity: the manifest vouches for a host's NIDs only while its file has the sha256 it
    records; a changed file's hosts are not NID-compared, and a health note says why."""
    tree = copy_tree(demo_tree, tmp_path)
    f = tree / "lnetctl" / "oss03.yaml"
    f.write_text(f.read_text() + "# edited by hand\n")
    moved = site(tmp_path, ("ip: 10.10.1.3\n", "ip: 10.10.1.33\n"))
    r = run(str(moved), "--live", str(tree))
    assert "! nid" not in r.output
    assert "lnetctl/oss03.yaml differs from the file lnetgen wrote" in r.output
    assert r.exit_code == 0, r.output  # health notes do not change the exit status


def test_only_lnetgen_generate_manifests_give_nids(demo_tree: Path, tmp_path: Path) -> None:
    moved = site(tmp_path, ("ip: 10.10.1.3\n", "ip: 10.10.1.33\n"))
    for name, change in (
        ("foreign", lambda d: d.pop("lnetgen_version")),
        ("collect", lambda d: d.__setitem__("kind", "collect")),
    ):
        tree = copy_tree(demo_tree, tmp_path / name)
        edit_manifest(tree, change)
        r = run(str(moved), "--live", str(tree))
        # a 'collect' manifest makes the tree a plain dump directory (exit 1: its files are
        # read as dumps); either way its NIDs are not taken from the manifest
        assert "! nid" not in r.output, (name, r.output)
        if name == "foreign":
            assert r.exit_code == 0, r.output


def test_nids_a_file_shows_itself_win_over_the_record(demo_tree: Path, tmp_path: Path) -> None:
    tree = copy_tree(demo_tree, tmp_path)
    f = tree / "lnetctl" / "oss03.yaml"
    text = f.read_text().replace(
        "        - interfaces:", "        - nid: 10.10.1.77@o2ib100\n          interfaces:", 1
    )
    f.write_text(text)
    edit_manifest(
        tree,
        lambda d: [
            e.__setitem__("sha256", hashlib.sha256(text.encode()).hexdigest())
            for e in d["files"]
            if e["path"] == "lnetctl/oss03.yaml"
        ],
    )
    nets = read_live(str(tree)).hosts["oss03"].nets
    assert nets is not None and nets.nids["o2ib100"] == ("10.10.1.77@o2ib100",)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d["routers"].__setitem__("rtr01", ["10.10.0.1@o2ib100", "nonsense"]), "rtr01"),
        (lambda d: d.__setitem__("routers", ["rtr01"]), "$.routers"),
        (lambda d: d["filesystems"]["scratch"]["servers"][0].__setitem__("nids", 5), "nids"),
        (lambda d: d["routers"].__setitem__("rtr_1", []), "rtr_1"),
    ],
)
def test_a_malformed_record_is_a_located_path_error(
    demo_tree: Path, tmp_path: Path, change: object, where: str
) -> None:
    tree = copy_tree(demo_tree, tmp_path)
    edit_manifest(tree, change)
    r = run(str(DEMO), "--live", str(tree))
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert "E-LIVE-PATH" in r.output and where in r.output
    assert "manifest.json:0:" not in r.output  # located at its line


# -------------------------------------------------- finding 2: tunables that need LNet reloaded


def _steps(*groups: tuple[str, HostDiff]) -> list:  # type: ignore[type-arg]
    result = DiffResult("s", "x", "p", groups=[Group(h, 1, d) for h, d in groups])
    return plan_changes(result)


@pytest.mark.parametrize(
    ("role", "first"),
    [(ROUTER, ROUTER_FIRST), (SERVER, SERVER_FIRST), ("client", CLIENT_FIRST)],
)
def test_per_ni_credits_are_an_outage_not_live(role: str, first: str) -> None:
    d = HostDiff(role, tunables=(("o2ib.peer_credits", 32, 16),))
    (step,) = _steps(("h01", d))
    assert step.title == "set LNet tunables"
    assert RELOAD in step.outage and first in step.outage, step.outage
    text = format_steps([step], DiffResult("s", "x", "p"))
    assert f"# h01 (1 host): {step.outage}" in text and "): live" not in text


def test_run_time_tunables_stay_live_and_a_mix_is_an_outage() -> None:
    live = HostDiff(ROUTER, tunables=(("transaction_timeout", 50, 100),))
    (step,) = _steps(("rtr01", live))
    assert step.outage == "" and step.commands == ("lnetctl set transaction_timeout 100",)
    mixed = HostDiff(
        ROUTER, tunables=(("o2ib.credits", 256, 1024), ("router_ping_timeout", 50, 30))
    )
    (step,) = _steps(("rtr02", mixed))
    assert RELOAD in step.outage and ROUTER_FIRST in step.outage
    assert step.commands[0] == "echo 30 > /sys/module/lnet/parameters/router_ping_timeout"
    removed = HostDiff(SERVER, tunables=(("retry_count", 3, None),))
    (step,) = _steps(("oss01", removed))
    assert SERVER_FIRST in step.outage  # going back to the default needs a reload


def test_router_and_server_with_the_same_reload_say_both() -> None:
    d1 = HostDiff(ROUTER, tunables=(("o2ib.peer_credits", 32, 16),))
    d2 = HostDiff(SERVER, tunables=(("o2ib.peer_credits", 32, 16),))
    (step,) = _steps(("rtr01", d1), ("oss01", d2))
    assert step.hosts == "oss01,rtr01"
    server, router = step.outage.split("; ")
    assert SERVER_FIRST in server and ROUTER_FIRST in router


def test_router_peer_credits_edit_end_to_end(tmp_path: Path) -> None:
    """rtr03's peer_credits 32 -> 16 read ``"live": true, "outage": null``."""
    out = tmp_path / "out"
    write_output(generate(str(tuned(tmp_path)), None, "lnetctl"), str(out))
    edited = tuned(tmp_path, TUNED.replace("peer_credits: 32", "peer_credits: 16"), "b.yaml")
    r = run(str(edited), "--live", str(out), "--plan-changes", "--format", "json")
    assert r.exit_code == 1, r.output
    (step,) = [s for s in json.loads(r.stdout)["steps"] if s["title"] == "set LNet tunables"]
    # the demo's routers are reloaded in two waves (test_reload_waves.py); this is the first
    assert step["live"] is False and "wave 1 of 2" in step["outage"], step["outage"]
    assert "drain these routers together (`lnetctl set routing 0`" in step["outage"]
    assert step["commands"][0] == "lnetctl set routing 0"  # drained with a line to paste
    assert any(c.startswith("# ") and "peer_credits" in c for c in step["commands"])
