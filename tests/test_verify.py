"""``lnetgen verify``: a sound tree is proved; each hand-broken property is caught, located,
with exit 1; unusable input exits 2; live dumps, --hosts, JSON and the ping plan."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import ROOT
from verify_tree import SERVER_NET, add_filesystems

from lnetgen import api
from lnetgen.cli import main
from lnetgen.diagnostics import Diagnostic
from lnetgen.verify import CODES, VerifyResult, verify


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["verify", *args])


def line_of(path: Path, text: str, start: int = 0) -> int:
    """1-based line of the first line at or after ``start`` holding ``text``."""
    for n, line in enumerate(path.read_text().split("\n"), 1):
        if n > start and text in line:
            return n
    raise AssertionError(f"{text!r} not in {path}")


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert old in text, (old, path)
    path.write_text(text.replace(old, new, count))


def drop_route_entries(path: Path, net: str, gateway: str | None = None) -> None:
    """Remove the route entries to ``net`` (through ``gateway`` only, when given)."""
    text = path.read_text()
    pattern = (
        rf"    - net: {net}\n      gateway: {re.escape(gateway or '')}[^\n]*\n"
        r"      hop: [0-9-]+\n      priority: [0-9]+\n"
    )
    new, n = re.subn(pattern, "", text)
    assert n, (net, gateway)
    path.write_text(new)


def drop_net_entry(path: Path, net: str) -> None:
    """Remove the ``net type: <net>`` entry of an lnetctl file."""
    text = path.read_text()
    new, n = re.subn(rf"    - net type: {net}\n(?:      [^\n]*\n)+", "", text, count=1)
    assert n, net
    path.write_text(new)


def manifest_edit(t: Path, change: Callable[[dict[str, Any]], None]) -> None:
    mpath = t / "manifest.json"
    doc = json.loads(mpath.read_text())
    change(doc)
    mpath.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def findings(result: VerifyResult, code: str) -> list[Diagnostic]:
    return [d for d in result.findings if d.code == code]


# ------------------------------------------------------------------ sound trees


def test_deployable_tree_is_proved(tree: Path) -> None:
    r = run(str(tree))
    assert r.exit_code == 0, r.output
    assert "verify: proved (0 error(s), 0 warning(s))" in r.output
    res = verify(str(tree))
    for fs in ("scratch", "home"):
        for kind, c in res.counts[fs].items():
            assert c.pairs > 0 and c.hold == c.pairs, (fs, kind, c)
    # scratch: 1 client class x 10 servers, 10 x 9 server pairs
    assert res.counts["scratch"]["client-class->server"].pairs == 10
    assert res.counts["scratch"]["server->server"].pairs == 90


@pytest.mark.parametrize(
    "strategy",
    [
        "groups",
        "projection",
        "round-robin",
        "nearest-neighbor",
        "baseline",  # one net for everything: servers already reach each other
    ],
)
def test_generated_demo_servers_reach_each_other(strategy: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.write_output(api.generate(str(ROOT / "sites/demo.yaml"), strategy), str(out))
    add_filesystems(out, server_net=None)  # a no-op once the manifest has the section
    res = verify(str(out))
    assert res.total("server->server").fail == 0, [d.format() for d in res.errors][:5]
    assert res.exit_code == 0, [d.format() for d in res.errors][:5]


def test_current_layout_fails_server_to_server_located(demo_out: Path, tmp_path: Path) -> None:
    """What the issue names: each server sees only its own storage net."""
    t = tmp_path / "t"
    shutil.copytree(demo_out, t)
    if "filesystems" in json.loads((t / "manifest.json").read_text()):
        pytest.skip("the tree already comes with its file systems")
    add_filesystems(t, server_net=None)
    res = verify(str(t))
    assert res.exit_code == 1
    assert res.total("server->server").fail > 0
    assert res.total("client-class->server").fail == 0
    oss01 = [d for d in findings(res, "V-NO-ROUTE") if d.file.endswith("lnetctl/oss01.yaml")]
    assert len(oss01) == 1
    assert "server->server" in oss01[0].message and "mds01" in oss01[0].message
    assert oss01[0].line == line_of(t / "lnetctl/oss01.yaml", "route:")


def test_modprobe_files_are_read_where_yaml_is_absent(tmp_path: Path) -> None:
    out = tmp_path / "out"
    gen = api.generate(str(ROOT / "sites/demo.yaml"), formats="modprobe,ansible")
    api.write_output(gen, str(out))
    add_filesystems(out)
    assert verify(str(out)).exit_code == 0
    conf = out / "modprobe/clients-gni.conf"
    edit(conf, "o2ib101 1 [205-208]@gni;", "o2ib101 2 [205-208]@gni;")
    res = verify(str(out))
    hop = findings(res, "V-HOP")
    assert hop and all(d.file == str(conf) for d in hop)
    assert hop[0].line == line_of(conf, "routes=") and hop[0].col > 1


# ------------------------------------------------------------------ hand-broken trees


def test_removed_route_is_no_route(tree: Path) -> None:
    client = tree / "lnetctl/clients-gni.yaml"
    drop_route_entries(client, "o2ib103")
    r = run(str(tree))
    assert r.exit_code == 1
    res = verify(str(tree))
    [d] = [d for d in findings(res, "V-NO-ROUTE") if "client-class->server" in d.message]
    assert d.file == str(client) and d.line == line_of(client, "route:")
    assert "mds01" in d.message and "o2ib103" in d.message
    # the MGS lives on o2ib103: the mount NID is unreachable too, located in the manifest
    [m] = findings(res, "V-MOUNT-UNREACHABLE")
    assert m.file == str(tree / "manifest.json")
    assert m.line == line_of(tree / "manifest.json", '"10.10.2.1@o2ib103"', m.line - 1)


def test_gateway_that_is_not_a_router(tree: Path) -> None:
    oss01 = tree / "lnetctl/oss01.yaml"
    edit(oss01, "gateway: 10.10.0.2@o2ib100", "gateway: 10.10.1.2@o2ib100")  # oss02
    res = verify(str(tree))
    assert res.exit_code == 1
    [d] = findings(res, "V-GW-NOT-ROUTER")
    assert d.file == str(oss01) and d.line == line_of(oss01, "10.10.1.2@o2ib100")
    assert "oss02" in d.message
    assert findings(res, "V-ASYMMETRIC")  # and clients' replies via rtr02 are dropped


def test_router_without_routing_enable(tree: Path) -> None:
    rtr = tree / "lnetctl/rtr01.yaml"
    edit(rtr, "routing:\n    enable: 1\n", "")
    res = verify(str(tree))
    assert res.exit_code == 1
    [d] = findings(res, "V-GW-NOT-ROUTER")
    assert d.file == str(rtr) and "rtr01" in d.message
    assert d.line == line_of(rtr, "net:")


def test_router_without_routing_in_modprobe(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.write_output(
        api.generate(str(ROOT / "sites/demo.yaml"), formats="modprobe,ansible"), str(out)
    )
    add_filesystems(out)
    rtr = out / "modprobe/rtr05.conf"
    edit(rtr, 'forwarding="enabled"', 'forwarding="disabled"')
    [d] = findings(verify(str(out)), "V-GW-NOT-ROUTER")
    assert d.file == str(rtr) and d.line == line_of(rtr, "forwarding=")


def test_route_with_hop_2(tree: Path) -> None:
    client = tree / "lnetctl/clients-gni.yaml"
    edit(client, "gateway: 201@gni\n      hop: 1", "gateway: 201@gni\n      hop: 2")
    res = verify(str(tree))
    assert res.exit_code == 1
    [d] = findings(res, "V-HOP")
    assert d.file == str(client) and d.line == line_of(client, "201@gni")
    assert d.path == "$.route[0]" and "hop 2" in d.message


def test_server_routes_back_without_a_router_clients_use(tree: Path) -> None:
    oss01 = tree / "lnetctl/oss01.yaml"
    drop_route_entries(oss01, "gni", "10.10.0.1@o2ib100")
    res = verify(str(tree))
    assert res.exit_code == 1
    [d] = findings(res, "V-ASYMMETRIC")
    assert d.file == str(oss01) and "rtr01" in d.message and "drops" in d.message


def test_server_routes_back_through_a_router_clients_do_not_use(tree: Path) -> None:
    client = tree / "lnetctl/clients-gni.yaml"
    drop_route_entries(client, "o2ib100", "209@gni")
    res = verify(str(tree))
    assert res.exit_code == 1
    asym = findings(res, "V-ASYMMETRIC")
    assert {Path(d.file).name for d in asym} == {"oss01.yaml", "oss02.yaml", "oss03.yaml"}
    oss01 = tree / "lnetctl/oss01.yaml"
    [d] = [d for d in asym if d.file == str(oss01)]
    assert d.line == line_of(oss01, "10.10.0.9@o2ib100") and "rtr09" in d.message


def test_client_without_its_ni(tree: Path) -> None:
    client = tree / "lnetctl/clients-gni.yaml"
    drop_net_entry(client, "gni")
    res = verify(str(tree))
    assert res.exit_code == 1
    [d] = findings(res, "V-NO-NI")
    assert d.file == str(client)
    on_net = findings(res, "V-GW-NOT-ON-NET")
    assert on_net and all(d.file == str(client) for d in on_net)
    assert res.total("client-class->server").fail == res.total("client-class->server").pairs


def test_mount_nid_on_an_unroutable_net(tree: Path) -> None:
    def change(doc: dict[str, Any]) -> None:
        fs = doc["filesystems"]["scratch"]
        fs["mgs_nids"] = ["10.10.2.1@o2ib999"]
        fs["mount"] = "10.10.2.1@o2ib999:/scratch"

    manifest_edit(tree, change)
    res = verify(str(tree))
    assert res.exit_code == 1
    [d] = findings(res, "V-MOUNT-UNREACHABLE")
    mpath = tree / "manifest.json"
    assert d.file == str(mpath) and d.line == line_of(mpath, '"10.10.2.1@o2ib999"')
    assert findings(res, "V-NID-NOT-CLIENT")  # nor is it a client NID of the MGS


def test_server_net_nid_handed_to_clients(tree: Path) -> None:
    """Clients get client NIDs only: the MGS's server-net NID must not be a mount NID."""
    server_nid = f"10.10.2.1@{SERVER_NET}"

    def change(doc: dict[str, Any]) -> None:
        fs = doc["filesystems"]["scratch"]
        fs["mgs_nids"] = [server_nid]
        fs["mount"] = f"{server_nid}:/scratch"

    manifest_edit(tree, change)
    res = verify(str(tree))
    codes = {d.code for d in res.errors}
    assert {"V-NID-NOT-CLIENT", "V-MOUNT-UNREACHABLE"} <= codes


def test_mkfs_servicenode_outside_client_nids(tree: Path) -> None:
    def change(doc: dict[str, Any]) -> None:
        t = doc["filesystems"]["scratch"]["servers"][1]["targets"][0]
        t["mkfs"] = t["mkfs"].replace(
            "--servicenode=10.10.1.1@o2ib100", "--servicenode=10.10.1.1@o2ib"
        )

    manifest_edit(tree, change)
    [d] = findings(verify(str(tree)), "V-NID-NOT-CLIENT")
    assert "scratch-OST0000" in d.message and d.line > 0


def test_mount_spec_and_mgs(tree: Path) -> None:
    def change(doc: dict[str, Any]) -> None:
        doc["filesystems"]["home"]["mount"] = "10.10.2.2@o2ib201:/scratch"
        doc["filesystems"]["home"]["mgs"] = "oss01"

    manifest_edit(tree, change)
    codes = {d.code for d in verify(str(tree)).errors}
    assert {"V-MOUNT-SPEC", "V-MGS"} <= codes


def test_failover_partner(tree: Path) -> None:
    def pair(doc: dict[str, Any]) -> None:
        servers = doc["filesystems"]["scratch"]["servers"]
        servers[1]["failover"], servers[2]["failover"] = "oss02", "oss01"
        for s, partner in ((servers[1], servers[2]), (servers[2], servers[1])):
            for t in s["targets"]:  # the partner's NIDs follow the primary's
                t["mkfs"] = t["mkfs"].replace(
                    " /dev/", f" --servicenode={','.join(partner['nids'])} /dev/"
                )

    manifest_edit(tree, pair)
    assert verify(str(tree)).exit_code == 0

    def stranger(doc: dict[str, Any]) -> None:
        doc["filesystems"]["scratch"]["servers"][1]["failover"] = "oss10"  # serves home

    manifest_edit(tree, stranger)
    [d] = findings(verify(str(tree)), "V-FAILOVER")
    assert "oss10" in d.message and d.file.endswith("manifest.json") and d.line > 0


def test_unreachable_failover_partner(tree: Path) -> None:
    """A partner on a net clients cannot reach fails like any server of the file system."""

    def pair(doc: dict[str, Any]) -> None:
        servers = doc["filesystems"]["scratch"]["servers"]
        servers[1]["failover"] = "oss04"

    manifest_edit(tree, pair)
    drop_route_entries(tree / "lnetctl/clients-gni.yaml", "o2ib101")
    res = verify(str(tree))
    [d] = [d for d in findings(res, "V-NO-ROUTE") if "client-class->server" in d.message]
    assert "oss[04-06]" in d.message


def test_server_without_the_shared_net(tree: Path) -> None:
    oss01 = tree / "lnetctl/oss01.yaml"
    drop_net_entry(oss01, SERVER_NET)
    res = verify(str(tree))
    assert res.exit_code == 1
    [d] = findings(res, "V-NID-NO-NI")
    assert d.file == str(oss01) and SERVER_NET in d.message
    [f] = [d for d in findings(res, "V-NO-ROUTE") if d.file == str(oss01)]
    assert "server->server" in f.message


def test_only_backup_routes_work_is_a_warning(tree: Path) -> None:
    for rtr in ("rtr18", "rtr20"):  # the primary routers of o2ib103 (mds01)
        edit(tree / f"lnetctl/{rtr}.yaml", "routing:\n    enable: 1\n", "")
    res = verify(str(tree))
    backup = findings(res, "V-BACKUP-ONLY")
    assert backup and all(d.severity == "warning" for d in backup)
    assert res.counts["scratch"]["client-class->server"].backup_only == 1
    assert res.counts["scratch"]["client-class->server"].fail == 0
    assert {d.code for d in res.errors} == {"V-GW-NOT-ROUTER"}


def test_unknown_gateway(tree: Path) -> None:
    client = tree / "lnetctl/clients-gni.yaml"
    edit(client, "gateway: 201@gni", "gateway: 999@gni")
    [d] = findings(verify(str(tree)), "V-GW-UNKNOWN")
    assert d.file == str(client) and d.line == line_of(client, "999@gni")


# ------------------------------------------------------------------ input, scope, formats


def test_manifest_without_filesystems_exits_2(demo_out: Path) -> None:
    if "filesystems" in json.loads((demo_out / "manifest.json").read_text()):
        pytest.skip("the generated manifest has the section")
    r = run(str(demo_out))
    assert r.exit_code == 2
    assert 'no "filesystems" section' in r.output and "Traceback" not in r.output


@pytest.mark.parametrize(
    "setup",
    ["missing", "not-json", "no-files", "file", "bad-nid", "unreadable-files"],
)
def test_unusable_input_exits_2(setup: str, tree: Path, tmp_path: Path) -> None:
    target = tree
    if setup == "missing":
        (tree / "manifest.json").unlink()
    elif setup == "not-json":
        (tree / "manifest.json").write_text("{not json")
    elif setup == "no-files":
        manifest_edit(tree, lambda d: d.update(files=[]))
    elif setup == "file":
        target = tree / "plan.json"
    elif setup == "bad-nid":
        manifest_edit(tree, lambda d: d["filesystems"]["home"].update(mgs_nids=["x@o2ib"]))
    else:
        shutil.rmtree(tree / "lnetctl")
        shutil.rmtree(tree / "modprobe")
    r = run(str(target))
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output


def test_one_unreadable_file_is_a_finding(tree: Path) -> None:
    (tree / "lnetctl/oss05.yaml").write_text("net: [\n")
    res = verify(str(tree))
    assert res.exit_code == 1
    assert any(d.file.endswith("oss05.yaml") for d in res.errors)
    assert findings(res, "V-HOST-MISSING")


def test_hosts_limit_the_scope(tree: Path) -> None:
    drop_route_entries(tree / "lnetctl/clients-gni.yaml", "o2ib103")
    only_home = verify(str(tree), hosts="oss10")
    assert only_home.counts["scratch"]["server->server"].pairs == 0
    assert only_home.counts["home"]["server->server"].pairs == 6  # oss10 <-> 3 others
    assert only_home.exit_code == 0
    assert verify(str(tree), hosts="nid00007").exit_code == 1
    assert run(str(tree), "--hosts", "nid[").exit_code == 2
    assert run(str(tree), "--hosts", "nobody").exit_code == 2


def test_json_output(tree: Path) -> None:
    edit(
        tree / "lnetctl/clients-gni.yaml",
        "gateway: 201@gni\n      hop: 1",
        "gateway: 201@gni\n      hop: 2",
    )
    r = run(str(tree), "--format", "json")
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert doc["ok"] is False
    assert [f["code"] for f in doc["findings"]] == ["V-HOP"]
    assert doc["totals"]["client-class->server"]["pairs"] == 14


def test_live_dumps(tree: Path, tmp_path: Path) -> None:
    """One dump per host, as diff --live reads them; clients grouped by the state they show."""
    live = tmp_path / "live"
    live.mkdir()
    manifest = json.loads((tree / "manifest.json").read_text())
    from lnetgen import nodes

    for f in manifest["files"]:
        if f["format"] == "lnetctl":
            for host in nodes.expand(f["hosts"]):
                shutil.copy(tree / f["path"], live / f"{host}.yaml")
    assert verify(str(tree), live=str(live)).exit_code == 0
    drop_route_entries(live / "nid00042.yaml", "o2ib200")
    res = verify(str(tree), live=str(live))
    assert res.exit_code == 1
    [d] = [d for d in findings(res, "V-NO-ROUTE") if "client-class->server" in d.message]
    assert d.file == str(live / "nid00042.yaml") and "nid00042" in d.message
    assert res.counts["home"]["client-class->server"].pairs == 8  # two groups x 4 servers
    (live / "nid00001.yaml").unlink()
    missing = findings(verify(str(tree), live=str(live)), "V-HOST-MISSING")
    assert [d.message.split()[3] for d in missing] == ["nid00001"]
    r = run("--live", str(live), "--manifest", str(tree / "manifest.json"))
    assert r.exit_code == 1 and "V-HOST-MISSING" in r.output


def test_live_dumps_of_part_of_the_site_with_hosts(tree: Path, tmp_path: Path) -> None:
    """A collection of only the hosts of ``--hosts`` (and what they route through) is no
    finding for the hosts left out: they were reported V-HOST-MISSING, exit 1, although
    ``diff --hosts`` on the same dumps said 0 missing."""
    live = tmp_path / "part"
    live.mkdir()
    manifest = json.loads((tree / "manifest.json").read_text())
    for f in manifest["files"]:
        if f["format"] == "lnetctl" and f["role"] != "client":
            shutil.copy(tree / f["path"], live / Path(f["path"]).name)
    shutil.copy(tree / "lnetctl/clients-gni.yaml", live / "nid00001.yaml")
    part = verify(str(tree), live=str(live), hosts="oss01")
    assert not findings(part, "V-HOST-MISSING") and part.exit_code == 0
    missing = findings(verify(str(tree), live=str(live), hosts="nid0000[1-2]"), "V-HOST-MISSING")
    assert [d.message.split()[3] for d in missing] == ["nid00002"]  # in scope, no dump
    assert len(findings(verify(str(tree), live=str(live)), "V-HOST-MISSING")) == 95


def test_live_dump_of_one_server_with_hosts(tree: Path, tmp_path: Path) -> None:
    """Only oss01 collected, ``--hosts oss01``: every other server was V-HOST-MISSING and each
    route through an uncollected router V-GW-UNKNOWN.  Hosts outside the scope without a dump
    stand in with the tree's files (the plan), as ``diff`` takes them; with ``--manifest``
    alone there is no plan to stand in, and a router or server missing is still a finding."""
    live = tmp_path / "one"
    live.mkdir()
    shutil.copy(tree / "lnetctl/oss01.yaml", live / "oss01.yaml")
    res = verify(str(tree), live=str(live), hosts="oss01")
    assert res.exit_code == 0, [d.message for d in res.findings if d.severity == "error"]
    assert res.counts["scratch"]["server->server"].pairs > 0
    assert res.counts["scratch"]["client-class->server"].pairs > 0
    drop_route_entries(live / "oss01.yaml", "gni")  # oss01's own routes back: in scope
    assert verify(str(tree), live=str(live), hosts="oss01").exit_code == 1
    alone = verify(None, live=str(live), manifest=str(tree / "manifest.json"), hosts="oss01")
    assert findings(alone, "V-HOST-MISSING")


def test_a_collected_client_is_named_apart_from_the_plan_s_class(
    tree: Path, tmp_path: Path
) -> None:
    """One client collected (its routes damaged), the rest standing in from the tree: the
    findings named the collected host ``clients-gni`` -- the plan's class -- and the 95 hosts
    nobody collected ``clients-gni#2``."""
    live = tmp_path / "one"
    live.mkdir()
    shutil.copy(tree / "lnetctl/clients-gni.yaml", live / "nid00001.yaml")
    drop_route_entries(live / "nid00001.yaml", "o2ib200")
    res = verify(str(tree), live=str(live), hosts="nid00001")
    assert res.exit_code == 1
    [d] = [d for d in findings(res, "V-NO-ROUTE") if "client-class->server" in d.message]
    assert "clients-gni#1 (nid00001)" in d.message and d.file == str(live / "nid00001.yaml")


def test_ping_plan(tree: Path, tmp_path: Path) -> None:
    plan = tmp_path / "ping.txt"
    assert run(str(tree), "--ping-plan", str(plan)).exit_code == 0
    text = plan.read_text()
    assert text.startswith("# generated by lnetgen ")
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    assert all(re.fullmatch(r"clush -w \S+ lnetctl ping \S+@\S+", ln) for ln in lines)
    assert "clush -w nid00001 lnetctl ping 10.10.2.1@o2ib103" in lines  # the MGS
    manifest = json.loads((tree / "manifest.json").read_text())
    client_nids = {
        n
        for fs in manifest["filesystems"].values()
        for s in fs["servers"]
        for n in s["client_nids"]
    }
    assert client_nids <= {ln.rsplit(" ", 1)[1] for ln in lines if "nid00001 " in ln}
    assert f"clush -w oss[01-09] lnetctl ping 10.10.2.1@{SERVER_NET}" in lines
    again = tmp_path / "again.txt"
    assert run(str(tree), "--ping-plan", str(again)).exit_code == 0
    assert again.read_bytes() == plan.read_bytes()


def test_output_is_deterministic_and_codes_are_documented(tree: Path) -> None:
    drop_route_entries(tree / "lnetctl/oss01.yaml", "gni", "10.10.0.1@o2ib100")
    assert run(str(tree)).output == run(str(tree)).output
    doc = (ROOT / "docs/verify.md").read_text()
    assert [c for c in CODES if f"`{c}`" not in doc] == []
    assert "verify" in CliRunner().invoke(main, ["--help"]).output


def test_two_hosts_claim_one_nid(tree: Path) -> None:
    edit(tree / "ansible/host_vars/rtr02/lnet.yml", "ip: 10.10.0.2", "ip: 10.10.0.1")
    [d] = findings(verify(str(tree)), "V-DUP-NID")
    assert "rtr01" in d.message and "rtr02" in d.message
    assert d.file == str(tree / "ansible/host_vars/rtr02/lnet.yml")
