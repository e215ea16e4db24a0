"""``lnetgen diff`` as a fourth reviewer used it on a collect directory and a tunables edit:

1. a host whose collection failed was listed only as "missing (in the plan, no live dump)",
   without the reason ``lnetgen collect`` recorded in its manifest: the reasons are now listed
   under the missing line (hosts whose reasons differ only by their own name share one row),
   in the JSON as ``missing_reasons``, only for the hosts ``--hosts`` keeps, and nothing
   unprintable reaches the terminal;
2. the "set LNet tunables" step said "drain it first" for every router whose tunables need
   LNet reloaded, even one that is the only gateway some hosts have to a net (draining it cuts
   them at once): such a router's reload is now a file system outage naming those nets, and
   only routers whose nets keep other gateways are told to drain.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner, Result

from lnetgen import nodes
from lnetgen.api import generate, write_output
from lnetgen.cli import main
from lnetgen.diff import CLIENT, ROUTER, SERVER, DiffResult, Group, HostDiff, plan_changes
from lnetgen.diff.report import format_text, to_dict
from lnetgen.diff.result import HOST_MARK, Paths, Peer, missing_reasons

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "sites" / "demo.yaml"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
NO_ROUTE = "exit status 255: ssh: connect to host {h} port 22: No route to host"
NO_LNETCTL = "exit status 127: bash: lnetctl: command not found"
DRAIN = "drain it first (`lnetctl set routing 0`"
WAVE_DRAIN = "drain these routers together (`lnetctl set routing 0`"
TUNABLES = "set LNet tunables"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def collect_dir(tmp_path: Path, failed: dict[str, str]) -> Path:
    """A directory ``lnetgen collect`` left when every host failed (no dump, its manifest)."""
    out = tmp_path / "live"
    out.mkdir()
    doc = {
        "kind": "collect",
        "collected": {"failed": failed, "hosts": len(failed), "nodeset": ""},
        "files": [],
    }
    (out / "manifest.json").write_text(json.dumps(doc), encoding="utf-8")
    return out


# ------------------------------------------------ finding 1: why a missing host has no dump


FAILED = {
    **{h: NO_ROUTE.format(h=h) for h in ("nid00001", "nid00002", "nid00003")},
    "nid00004": NO_LNETCTL,
    "rtr01": "exit status 255: show:",
    "rtr05": NO_LNETCTL,  # outside --hosts below
    "login01": NO_LNETCTL,  # no host of the plan
}
SCOPE = "nid[00001-00005],rtr01"


def test_missing_hosts_say_why_collect_failed(tmp_path: Path) -> None:
    live = collect_dir(tmp_path, FAILED)
    r = run("diff", str(DEMO), "--live", str(live), "--hosts", SCOPE)
    assert r.exit_code == 1, r.output
    lines = r.stdout.splitlines()
    at = lines.index("missing (in the plan, no live dump): nid[00001-00005],rtr01 (6 hosts)")
    assert lines[at + 1 :] == [
        f"  nid[00001-00003]: lnetgen collect failed: {NO_ROUTE.format(h=HOST_MARK)}",
        f"  nid00004: lnetgen collect failed: {NO_LNETCTL}",
        "  rtr01: lnetgen collect failed: exit status 255: show:",
    ], lines[at:]
    # nid00005: collect recorded nothing for it; rtr05 and login01 are outside the scope
    assert "nid00005:" not in r.stdout and "rtr05" not in r.stdout and "login01" not in r.stdout


def test_plan_changes_says_why_the_hosts_it_skips_have_no_plan(tmp_path: Path) -> None:
    """``--plan-changes`` listed the hosts it could not plan without collect's reasons."""
    live = collect_dir(tmp_path, FAILED)
    r = run("diff", str(DEMO), "--live", str(live), "--hosts", SCOPE, "--plan-changes")
    assert r.exit_code == 1, r.output
    lines = r.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("# not planned"))
    assert lines[at + 1 :] == [
        f"# nid[00001-00003]: lnetgen collect failed: {NO_ROUTE.format(h=HOST_MARK)}",
        f"# nid00004: lnetgen collect failed: {NO_LNETCTL}",
        "# rtr01: lnetgen collect failed: exit status 255: show:",
    ], lines[at:]


def test_json_lists_the_reasons_in_order(tmp_path: Path) -> None:
    live = collect_dir(tmp_path, FAILED)
    r = run("diff", str(DEMO), "--live", str(live), "--hosts", SCOPE, "--format", "json")
    assert r.exit_code == 1, r.output
    assert json.loads(r.stdout)["missing_reasons"] == [
        {"hosts": "nid[00001-00003]", "count": 3, "reason": NO_ROUTE.format(h=HOST_MARK)},
        {"hosts": "nid00004", "count": 1, "reason": NO_LNETCTL},
        {"hosts": "rtr01", "count": 1, "reason": "exit status 255: show:"},
    ]


def test_a_host_alone_with_its_reason_keeps_it_as_collect_recorded_it() -> None:
    failed = {
        "nid1": NO_ROUTE.format(h="nid1.example.org"),
        "nid10": NO_ROUTE.format(h="nid10"),
        "nid2": "nid2x: nid1 and nid2 differ",
    }
    assert missing_reasons(["nid2", "nid10", "nid1", "nid3"], failed) == [
        ("nid1", 1, NO_ROUTE.format(h="nid1.example.org")),
        ("nid2", 1, "nid2x: nid1 and nid2 differ"),
        ("nid10", 1, NO_ROUTE.format(h="nid10")),
    ]
    rows = missing_reasons(
        ["nid10", "nid1"], {"nid1": "host nid1 down", "nid10": "host nid10 down"}
    )
    assert rows == [("nid[1,10]", 2, f"host {HOST_MARK} down")]


def test_no_control_character_of_a_reason_reaches_the_terminal(tmp_path: Path) -> None:
    hostile = "exit status 1: \x1b]0;pwned\x07 \x1b[2J\r\x08\x7f \x85\x9b31m \u202egni\u2066"
    live = collect_dir(tmp_path, {"nid00001": hostile})
    r = run("diff", str(DEMO), "--live", str(live), "--hosts", "nid00001")
    assert r.exit_code == 1, r.output
    assert "  nid00001: lnetgen collect failed: exit status 1: " in r.stdout
    for stream in (r.stdout, r.stderr):
        assert CONTROL.search(stream) is None, stream
    # a result built elsewhere, its reason never escaped by the live reader
    result = DiffResult("s", "x", "p", missing="h1", missing_count=1)
    result.missing_reasons = [("h1", 1, hostile)]
    text = format_text(result)
    assert CONTROL.search(text) is None and "\\x1b]0;pwned\\x07" in text
    assert to_dict(result)["missing_reasons"][0]["reason"] == hostile  # JSON escapes it itself


# ----------------------------------- finding 2: reloading a router that is a net's only gateway


def _reload_steps(paths: Paths | None) -> list[tuple[str, str]]:
    d = HostDiff(ROUTER, tunables=(("o2ib.peer_credits", 32, 16),))
    s = HostDiff(SERVER, tunables=(("o2ib.peer_credits", 32, 16),))
    groups = [Group("rtr[4-6]", 3, d), Group("oss1", 1, s)]  # rtr[5-6] join oss1
    steps = plan_changes(DiffResult("s", "x", "p", groups=groups, paths=paths))
    return [(st.hosts, st.outage) for st in steps if st.title.startswith(TUNABLES)]


def test_a_sole_gateway_is_not_told_to_drain() -> None:
    """rtr4 is the only gateway clients have to o2ib4 (and oss1 back to gni); rtr5 and rtr6
    share o2ib5."""
    nets = frozenset({"gni", "o2ib4", "o2ib5"})
    client = frozenset(
        {("o2ib4", "rtr4", "4@gni"), ("o2ib5", "rtr5", "5@gni"), ("o2ib5", "rtr6", "6@gni")}
    )
    server = frozenset({("gni", "rtr4", "10.0.0.4@o2ib4")})
    paths = Paths(
        (Peer(CLIENT, 8, client, client), Peer(SERVER, 1, server, server)),
        {"rtr4": nets, "rtr5": nets, "rtr6": nets},
    )
    steps = dict(_reload_steps(paths))
    # rtr5 and rtr6 are reloaded one after the other (lnetgen.diff.paths.reload_waves), each
    # drained by its own line (so rtr5 no longer shares oss1's commands)
    assert sorted(steps) == ["oss1", "rtr4", "rtr5", "rtr6"], steps
    assert steps["rtr4"].startswith("file system outage")
    assert "only gateway some hosts have to gni, o2ib4" in steps["rtr4"]
    assert DRAIN not in steps["rtr4"] and WAVE_DRAIN not in steps["rtr4"]
    assert "unmount the targets" in steps["oss1"]
    routers = steps["rtr5"]
    assert routers.startswith("router outage, paths kept, wave 1 of 2") and WAVE_DRAIN in routers
    assert steps["rtr6"].startswith("router outage, paths kept, wave 2 of 2")


def test_without_paths_the_step_says_both() -> None:
    ((hosts, outage),) = _reload_steps(None)
    assert hosts == "oss1,rtr[4-6]"
    assert DRAIN in outage and "a net it is the only gateway of is cut off until" in outage


TUNED = "tunables:\n  peer_credits: 16\n  roles:\n    router: {peer_credits: 32}\n\n"


def test_projection_routers_end_to_end(tmp_path: Path) -> None:
    """The demo site in projection: rtr02 is the only router of oss02's net o2ib101."""
    text = DEMO.read_text().replace("client_nets:", TUNED + "client_nets:", 1)
    before, after = tmp_path / "before.yaml", tmp_path / "after.yaml"
    before.write_text(text)
    after.write_text(text.replace("peer_credits: 32", "peer_credits: 16"))
    tree = tmp_path / "tree"
    write_output(generate(str(before), "projection", "lnetctl"), str(tree))
    r = run("diff", str(after), "-s", "projection", "--live", str(tree), "--plan-changes")
    assert r.exit_code == 1, r.output
    outages = {
        line.split(" (", 1)[0][2:]: line.split("): ", 1)[1]
        for line in r.stdout.splitlines()
        if line.startswith("# rtr")
    }
    assert "only gateway some hosts have to gni, o2ib101:" in outages["rtr02"]
    assert DRAIN not in outages["rtr02"]
    kept = [h for h, o in outages.items() if o.startswith("router outage, paths kept, wave")]
    assert nodes.fold(n for h in kept for n in nodes.expand(h)) == "rtr[01,04-05,08-09,12-13,16-20]"
    assert len(kept) == 2 and all(WAVE_DRAIN in outages[h] for h in kept)
