"""LNet Multi-Rail: routers and servers with several ports on one net (``rails``), through
inventory, plan, every emitter, the live readers, diff, verify, the fabric and the throughput
model."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from lnetgen import routestr
from lnetgen.api import Generated, generate, write_output
from lnetgen.cli import main
from lnetgen.diagnostics import InputError
from lnetgen.diff import diff, plan_changes
from lnetgen.emit.opensm import fabric_guids
from lnetgen.fabric.cabling import fabric_hosts, fabric_of, layout
from lnetgen.inventory import load_site
from lnetgen.live import read_dump, read_live
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.planfile import read_plan
from lnetgen.solve import solve
from lnetgen.throughput import WorkloadSpec, predict

ROOT = Path(__file__).resolve().parent.parent
MINI = ROOT / "tests" / "cases" / "valid" / "multirail" / "site.yaml"


@cache
def mini() -> tuple[Site, Plan]:
    site = load_site(str(MINI))[0]
    return site, solve(site)


@cache
def mini_generated() -> Generated:
    return generate(str(MINI))


def files(gen: Generated) -> dict[str, str]:
    return {f.path: f.content for f in gen.files}


def lnetctl_nis(text: str) -> dict[str, list[str]]:
    """net type -> the interfaces of its local NIs, from an lnetctl YAML file."""
    doc: dict[str, Any] = yaml.safe_load(text)
    return {n["net type"]: [ni["interfaces"][0] for ni in n["local NI(s)"]] for n in doc["net"]}


# ----------------------------------------------------------------------------- inventory, plan


def test_inventory_reads_rails() -> None:
    site, _plan = mini()
    rtr1 = site.router("rtr1")
    assert [(x.ip, x.interface, x.attach.port) for x in rtr1.rails] == [("10.2.0.101", "ib2", 11)]
    assert site.server("oss1").rails[0].guid == "0x0002c90300b00101"
    assert site.server("mds1").rails == ()


def test_a_rail_on_the_client_interface_is_refused(tmp_path: Path) -> None:
    text = MINI.read_text()
    old = "{ip: 10.2.0.101, interface: ib2,"
    assert old in text
    path = tmp_path / "site.yaml"
    path.write_text(text.replace(old, "{ip: 10.2.0.101, interface: ib0,"))
    with pytest.raises(InputError) as exc:
        load_site(str(path))
    [d] = [d for d in exc.value.diagnostics if d.code == "E-RAIL-IFACE"]
    assert "already used by its client port" in d.message and d.path.endswith("interface")


def test_plan_lists_every_ni_and_routes_name_the_first() -> None:
    _site, plan = mini()
    rtr1 = next(r for r in plan.routers if r.name == "rtr1")
    assert [(i.net, i.nid, i.interface) for i in rtr1.interfaces] == [
        ("o2ib100", "10.100.1.1@o2ib100", "ib0"),
        ("o2ib1", "10.2.0.1@o2ib1", "ib1"),
        ("o2ib1", "10.2.0.101@o2ib1", "ib2"),
    ]
    assert rtr1.networks == ("o2ib100", "o2ib1")
    assert rtr1.nid_on("o2ib1") == "10.2.0.1@o2ib1"
    # the servers of o2ib1 route back through the router's first NID, never a rail's
    gateways = {r.gateway for sr in plan.server_routes for r in sr.routes}
    assert gateways == {"10.2.0.1@o2ib1", "10.2.0.2@o2ib2"}
    oss1 = next(s for s in plan.servers if s.name == "oss1")
    assert oss1.server_net == "o2ib50"
    assert [(i.net, i.nid) for i in oss1.interfaces] == [
        ("o2ib1", "10.2.1.1@o2ib1"),
        ("o2ib1", "10.2.1.101@o2ib1"),
        ("o2ib50", "10.2.1.1@o2ib50"),
        ("o2ib50", "10.2.1.101@o2ib50"),
    ]
    assert oss1.nids == ("10.2.1.1@o2ib1", "10.2.1.1@o2ib50")
    assert oss1.client_nids == ("10.2.1.1@o2ib1", "10.2.1.101@o2ib1")


def test_plan_json_round_trips_rails(tmp_path: Path) -> None:
    _site, plan = mini()
    path = tmp_path / "plan.json"
    path.write_text(plan.to_json())
    back = read_plan(str(path))
    assert back.servers == plan.servers and back.routers == plan.routers
    doc = json.loads(path.read_text())
    by_name = {s["name"]: s for s in doc["servers"]}
    assert "rails" not in by_name["mds1"]  # a one-port server's entry is as before
    assert by_name["oss1"]["rails"][0] == {
        "interface": "ib1",
        "net": "o2ib1",
        "nid": "10.2.1.101@o2ib1",
    }


# ----------------------------------------------------------------------------- emitters


def test_lnetctl_groups_the_nis_of_a_net_as_export_prints_them() -> None:
    out = files(mini_generated())
    assert lnetctl_nis(out["lnetctl/rtr1.yaml"]) == {"o2ib100": ["ib0"], "o2ib1": ["ib1", "ib2"]}
    assert lnetctl_nis(out["lnetctl/oss1.yaml"]) == {
        "o2ib1": ["ib0", "ib1"],
        "o2ib50": ["ib0", "ib1"],
    }
    assert out["lnetctl/rtr1.yaml"].count("- net type: o2ib1\n") == 1


def test_live_reader_takes_every_ni_of_the_file(tree: Path) -> None:
    state = read_dump(str(tree / "lnetctl" / "oss1.yaml"))
    assert state.nets is not None
    assert state.nets.nets["o2ib1"] == ("ib0", "ib1")
    assert state.nets.nets["o2ib50"] == ("ib0", "ib1")


def test_modprobe_lists_every_interface_of_a_net_once() -> None:
    out = files(mini_generated())
    text = out["modprobe/rtr1.conf"]
    networks = text.split('networks="')[1].split('"')[0]
    assert networks == "o2ib100(ib0),o2ib1(ib1,ib2)"
    # lnet_parse_networks makes one NI per interface of o2ib1(ib1,ib2)
    assert routestr.parse_networks(networks) == [("o2ib100", ("ib0",)), ("o2ib1", ("ib1", "ib2"))]
    assert 'networks="o2ib1(ib0,ib1),o2ib50(ib0,ib1)"' in out["modprobe/oss1.conf"]


def test_ansible_carries_one_entry_per_ni() -> None:
    out = files(mini_generated())
    hv = yaml.safe_load(out["ansible/host_vars/oss1/lnet.yml"])
    assert hv["lustre_lnet_lnetctl_networks"]["o2ib1"] == [
        {"ip": "10.2.1.1", "interfaces": ["ib0"]},
        {"ip": "10.2.1.101", "interfaces": ["ib1"]},
    ]
    assert hv["lustre_lnet_module_networks"] == ["o2ib1(ib0,ib1),o2ib50(ib0,ib1)"]


def test_ansible_role_renders_the_lnetctl_files() -> None:
    from test_ansible import role_render, vars_for  # the role's templates, rendered as Ansible

    gen = mini_generated()
    out = files(gen)
    hv = vars_for(gen)
    for host in ("rtr1", "oss1"):
        assert role_render(gen, "lnet.conf.j2", hv[host]) == out[f"lnetctl/{host}.yaml"], host


def test_mkfs_and_mount_list_the_rails_as_nids_of_the_same_node() -> None:
    readme = files(mini_generated())["README.txt"]
    assert (
        "--servicenode=10.2.1.1@o2ib1,10.2.1.101@o2ib1,10.2.1.1@o2ib50,10.2.1.101@o2ib50" in readme
    )


def test_mgs_with_rails_mounts_from_every_storage_nid(tmp_path: Path) -> None:
    text = MINI.read_text().replace(
        '     attach: {switch: stor-tor1, port: 4}, guid: "0x0002c90300b00002"}',
        '     attach: {switch: stor-tor1, port: 4}, guid: "0x0002c90300b00002",\n'
        "     rails: [{ip: 10.2.1.102, interface: ib1, attach: {switch: stor-tor1, port: 14}}]}",
    )
    assert text != MINI.read_text()
    path = tmp_path / "mgs-rails.yaml"
    path.write_text(text)
    gen = generate(str(path))
    assert "mount -t lustre 10.2.1.2@o2ib1,10.2.1.102@o2ib1:/lscratch" in files(gen)["README.txt"]
    out = tmp_path / "out"
    write_output(gen, str(out))
    assert CliRunner().invoke(main, ["verify", str(out)]).exit_code == 0


def test_opensm_io_guid_file_has_every_server_port() -> None:
    site, _plan = mini()
    guids = fabric_guids(site, fabric_of(site, "storage-ib"))
    assert ("0x0002c90300b00101", "oss1 ib1") in guids.io


def test_fabric_has_one_hca_per_rail() -> None:
    site, _plan = mini()
    fab = fabric_of(site, "storage-ib")
    hosts = fabric_hosts(site, fab)
    assert sorted((h.name, h.interface) for h in hosts if h.name in ("rtr1", "oss1")) == [
        ("oss1", "ib0"),
        ("oss1", "ib1"),
        ("rtr1", "ib1"),
        ("rtr1", "ib2"),
    ]
    lay = layout(site, fab)
    cas = [n for n in lay.net.nodes if n.kind == "ca"]
    assert len(cas) == len(hosts) == 2 + 2 + 2 + 1 + 1  # rtr1, rtr2, oss1 two each; oss2, mds1


# ----------------------------------------------------------------------------- verify, diff


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mr") / "out"
    write_output(mini_generated(), str(out))
    return out


def test_verify_proves_the_multirail_tree(tree: Path) -> None:
    res = CliRunner().invoke(main, ["verify", str(tree)])
    assert res.exit_code == 0, res.output
    assert "proved" in res.output


@pytest.mark.parametrize(("gateway", "code"), [("10.2.0.101@o2ib1", 0), ("10.2.0.99@o2ib1", 1)])
def test_verify_takes_a_rail_nid_as_its_router(tmp_path: Path, gateway: str, code: int) -> None:
    """A server routing back through a router's rail NID reaches the clients through that
    router (the tree's Ansible host_vars give the rail's address); a NID nobody owns fails."""
    out = tmp_path / "out"
    write_output(mini_generated(), str(out))
    for host in ("oss1", "mds1"):
        f = out / "lnetctl" / f"{host}.yaml"
        text = f.read_text()
        assert "gateway: 10.2.0.1@o2ib1" in text
        f.write_text(text.replace("gateway: 10.2.0.1@o2ib1", f"gateway: {gateway}"))
    res = CliRunner().invoke(main, ["verify", str(out)])
    assert res.exit_code == code, res.output


def _live_copy(tree: Path, tmp_path: Path, host: str, old: str, new: str) -> Path:
    live = tmp_path / "live"
    live.mkdir()
    for f in (tree / "lnetctl").glob("*.yaml"):
        shutil.copy(f, live / f.name)
    text = (live / f"{host}.yaml").read_text()
    assert old in text, old
    (live / f"{host}.yaml").write_text(text.replace(old, new, 1))  # the first net's block
    return live


def test_diff_takes_a_route_through_a_rail_as_the_same_gateway(tree: Path, tmp_path: Path) -> None:
    site, plan = mini()
    assert diff(plan, read_live(str(tree / "lnetctl")), site).groups == []
    live = _live_copy(
        tree, tmp_path, "oss1", "gateway: 10.2.0.1@o2ib1", "gateway: 10.2.0.101@o2ib1"
    )
    res = diff(plan, read_live(str(live)), site)
    assert res.groups == []  # another NID of the same router: nothing to change


def test_diff_finds_a_missing_rail(tree: Path, tmp_path: Path) -> None:
    site, plan = mini()
    live = _live_copy(
        tree,
        tmp_path,
        "rtr1",
        "ib1\n        - interfaces:\n              0: ib2\n",
        "ib1\n",
    )
    res = diff(plan, read_live(str(live)), site)
    [group] = res.groups
    assert group.hosts == "rtr1"
    assert group.diff.change_nets == (("o2ib1", ("ib1",), ("ib1", "ib2")),)
    # the step that fixes it adds the one NI, live
    [step] = plan_changes(res)
    assert (step.hosts, step.commands, step.outage) == (
        "rtr1",
        ("lnetctl net add --net o2ib1 --if ib2",),
        "",
    )


def test_diff_finds_a_rail_whose_nid_differs(tree: Path, tmp_path: Path) -> None:
    """An export prints every NI's NID: a rail whose address is not the inventory's is a NID
    finding, like the first port's (mkfs and mount strings name it)."""
    site, plan = mini()
    ni = "        - interfaces:\n              0: ib1\n"
    live = _live_copy(
        tree,
        tmp_path,
        "oss1",
        "local NI(s):\n        - interfaces:\n              0: ib0\n" + ni,
        "local NI(s):\n        - nid: 10.2.1.1@o2ib1\n          interfaces:\n"
        "              0: ib0\n        - nid: 10.2.1.111@o2ib1\n          interfaces:\n"
        "              0: ib1\n",
    )
    res = diff(plan, read_live(str(live)), site)
    [group] = res.groups
    assert group.hosts == "oss1"
    assert group.diff.nids == (
        ("o2ib1", ("10.2.1.1@o2ib1", "10.2.1.111@o2ib1"), "10.2.1.101@o2ib1"),
    )


# ----------------------------------------------------------------------------- throughput


def test_model_counts_every_port_link() -> None:
    site, plan = mini()
    spec = WorkloadSpec(pattern="file-per-process", op="write", nodes="linear", files_per_ost=2)
    with_rails = predict(site, plan, spec)
    one_port = replace(
        site,
        routers=tuple(replace(r, rails=()) for r in site.routers),
        servers=tuple(replace(s, rails=()) for s in site.servers),
    )
    without = predict(one_port, plan, spec)
    # rates.ib_link 2 GB/s: two links at each router and at oss1, one at oss2
    assert with_rails.bound_mb_s["router port"] == pytest.approx(8000.0)
    assert without.bound_mb_s["router port"] == pytest.approx(4000.0)
    assert with_rails.bound_mb_s["server port"] == pytest.approx(6000.0)
    assert without.bound_mb_s["server port"] == pytest.approx(4000.0)
    # 8 ranks, 4 per OSS: one port each binds at 4 GB/s; oss1's two ports lift the steady rate
    assert without.steady_mb_s == pytest.approx(4000.0)
    assert with_rails.steady_mb_s == pytest.approx(6000.0)
    assert with_rails.bottleneck is not None and with_rails.bottleneck.kind == "server port"
