"""The InfiniBand side without running OpenSM: ibsim export, ibnetdiscover import, the IO port
finding and plan, the OpenSM guid files and opensm.conf, and the ``fabric`` commands."""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from functools import cache
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner
from conftest import wolf_unrecorded
from hypothesis import given
from hypothesis import strategies as st

from lnetgen import fabric
from lnetgen.cli.fabric import command
from lnetgen.diagnostics import InputError
from lnetgen.emit.opensm import fabric_files
from lnetgen.fabric import simulate, trace
from lnetgen.inventory import load_site
from lnetgen.model import OpenSMChoice, Site
from lnetgen.resources import schema

ROOT = Path(__file__).resolve().parent.parent
SITES = ROOT / "sites"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ibnetdiscover"


@cache
def site(name: str) -> Site:
    return load_site(str(SITES / f"{name}.yaml"))[0]


def fabric_schema() -> dict[str, object]:
    """The inventory schema of ``fabrics``, with the definitions it refers to."""
    full = schema("site.schema.json")
    return {**full["properties"]["fabrics"], "$defs": full.get("$defs", {})}


# ----------------------------------------------------------------------------- export


def test_wolf_layout_has_one_node_per_chip_and_host() -> None:
    lay = fabric.layout(site("wolf"))
    assert lay.fabric.name == "wolf-ib"
    assert (len(lay.leaves), len(lay.spines), len(lay.hosts)) == (36, 18, 640)
    kinds = Counter(n.kind for n in lay.net.nodes)
    assert kinds == {"switch": 54, "ca": 640}
    assert lay.derived() == []  # wolf gives every GUID


def test_wolf_export_keeps_inventory_guids() -> None:
    s = site("wolf")
    lay = fabric.layout(s)
    sw = s.switch("wfibcore1")
    assert sw is not None
    assert [c.guid for c in lay.leaves] == [fabric.guid_int(lf.guid) for lf in sw.leaves]
    assert [c.guid for c in lay.spines] == [fabric.guid_int(g) for g in sw.spine_guids]
    port_guids = {n.port_guid(1) for n in lay.net.nodes if n.kind == "ca"}
    expected = {fabric.guid_int(g) for g in s.clients.guids}
    expected |= {fabric.guid_int(r.client_guid) for r in s.routers}
    assert port_guids == expected
    # every director chip carries the chassis GUID as its system image GUID
    assert {n.sysimg_guid for n in lay.net.nodes if n.kind == "switch"} == {
        fabric.guid_int(sw.guid)
    }


def test_wolf_export_cables_every_leaf_to_every_spine() -> None:
    lay = fabric.layout(site("wolf"))
    by_id = lay.net.by_id()
    spine_ids = {f"S-{c.guid:016x}" for c in lay.spines}
    for c in lay.leaves:
        node = by_id[f"S-{c.guid:016x}"]
        ups = [lk for lk in node.links if lk.peer in spine_ids]
        assert sorted(lk.peer for lk in ups) == sorted(spine_ids)
        assert [lk.port for lk in ups] == list(range(19, 37))  # host ports 1-18 first
        assert lay.uplinks[(c.switch, c.leaf)] == tuple(range(19, 37))
    for c in lay.spines:
        assert len(by_id[f"S-{c.guid:016x}"].links) == 36


def test_wolf_io_nodes_sit_on_port_18_as_in_the_paper() -> None:
    lay = fabric.layout(site("wolf"))
    io = [h for h in lay.hosts if h.kind == "router"]
    assert len(io) == 24
    assert {h.attach.port for h in io} == {18}
    assert len({h.attach.leaf for h in io}) == 24


def test_export_text_is_ibsim_syntax() -> None:
    text = fabric.export_ibsim(site("wolf"))
    lines = text.splitlines()
    assert lines[0].startswith("# ibsim net file of fabric wolf-ib (compute) of site wolf")
    assert "switchguid=0x0011750300000001" in lines
    assert 'Switch\t36 "S-0011750300000001"\t\t# "wfibcore1 Leaf L01" base port 0 lid 0 lmc 0' in (
        lines
    )
    # a CA's node GUID is its port GUID - 1; the port line carries the port GUID
    assert "caguid=0x0011750a00000000" in lines
    assert any(ln.startswith("[1](11750a00000001) ") for ln in lines)
    assert text == fabric.export_ibsim(site("wolf"))  # deterministic


def test_storage_fabric_export_derives_missing_guids() -> None:
    s = site("wolf")
    lay = fabric.layout(s, "lustre-ib")
    # 24 routers + 21 OSS + 1 MDS
    assert (len(lay.leaves), len(lay.spines), len(lay.hosts)) == (8, 9, 46)
    derived = lay.derived()
    assert len(derived) == 17  # 8 leaves + 9 spines have no GUID in wolf.yaml
    assert all(c.guid >> 56 == 0x02 for c in (*lay.leaves, *lay.spines))
    assert fabric.layout(s, "lustre-ib").net == lay.net  # stable


def test_unknown_fabric_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no fabric 'nope'"):
        fabric.layout(site("wolf"), "nope")


def test_duplicate_guid_is_refused() -> None:
    s = site("wolf")
    hosts = fabric.fabric_hosts(s, fabric.fabric_of(s))
    clash = dataclasses.replace(hosts[1], guid=hosts[0].guid)
    with pytest.raises(InputError, match="OpenSM needs unique"):
        fabric.layout(s, None, [hosts[0], clash, *hosts[2:]])


def test_client_ports_follow_topology_attach() -> None:
    s = site("wolf")
    ports = fabric.client_ports(s)
    assert ports[:18] == [*range(1, 18), 1]  # wolf001-017 on L01, wolf018 first on L02
    assert max(ports) == 18


# ----------------------------------------------------------------------------- import


def test_round_trip_recovers_the_wolf_fabric() -> None:
    s = site("wolf")
    net = fabric.parse_ibnetdiscover(fabric.export_ibsim(s))
    imp = fabric.infer_fabric(net, "wolf-ib", "compute")
    raw = yaml.safe_load((SITES / "wolf.yaml").read_text())
    want = raw["fabrics"][0]
    got = imp.fabric
    assert got["name"] == want["name"] and got["role"] == "compute"
    (sw,) = got["switches"]
    (want_sw,) = want["switches"]
    for key in ("name", "kind", "guid", "spines", "spine_guids", "leaves"):
        assert sw[key] == want_sw[key], key
    assert imp.notes == []
    hosts = {h.name: h for h in imp.hosts}
    assert len(hosts) == 640
    io01 = hosts["wolf-io01"]
    assert (io01.switch, io01.leaf, io01.port, io01.guid) == (
        "wfibcore1",
        "L01",
        18,
        "0x0011750a00000001",
    )


def test_import_director_from_real_ibnetdiscover() -> None:
    """demo-core2.txt is ibnetdiscover's output on ibsim running demo.yaml's core2."""
    text = (FIXTURES / "demo-core2.txt").read_text()
    imp = fabric.infer_fabric(fabric.parse_ibnetdiscover(text, "demo-core2.txt"), "storage-ib")
    (sw,) = imp.fabric["switches"]
    assert sw["name"] == "core2" and sw["kind"] == "director"
    assert sw["guid"] == "0x0002c90200200000"  # the chassis: shared system image GUID
    assert sw["spines"] == 6 and len(sw["spine_guids"]) == 6
    assert [(lf["name"], lf["ports"], lf["uplinks"]) for lf in sw["leaves"]] == [
        ("L01", 12, 12),
        ("L02", 12, 12),
        ("L03", 12, 12),
    ]
    demo = site("demo")
    want = {r.name: (r.attach.leaf, r.attach.port, r.guid) for r in demo.routers}
    want |= {s.name: (s.attach.leaf, s.attach.port, s.guid) for s in demo.servers}
    got = {h.name: (h.leaf, h.port, h.guid) for h in imp.hosts}
    assert len(got) == 20
    assert all(got[n] == want[n] for n in got)


def test_import_separate_leaf_switches_as_one_logical_director() -> None:
    text = (FIXTURES / "leafspine.txt").read_text()
    imp = fabric.infer_fabric(fabric.parse_ibnetdiscover(text), "leafspine")
    (sw,) = imp.fabric["switches"]
    assert sw["name"] == "leafspine-core" and sw["kind"] == "director"
    assert "guid" not in sw  # separate boxes: no chassis GUID
    assert sw["spine_guids"] == ["0x7cfe900300b00010", "0x7cfe900300b00011"]
    assert [lf["name"] for lf in sw["leaves"]] == ["leaf01", "leaf02", "leaf03", "leaf04"]
    assert {(lf["ports"], lf["uplinks"]) for lf in sw["leaves"]} == {(34, 2)}
    assert [(h.name, h.leaf, h.port) for h in imp.hosts[:4]] == [
        ("node01", "leaf01", 1),
        ("node02", "leaf01", 2),
        ("node03", "leaf01", 3),
        ("node04", "leaf02", 1),
    ]


def test_imported_fabric_section_is_valid_inventory() -> None:
    for name in ("demo-core2.txt", "leafspine.txt"):
        net = fabric.parse_ibnetdiscover((FIXTURES / name).read_text())
        doc = yaml.safe_load(fabric.imported_yaml(fabric.infer_fabric(net, "x"), name))
        jsonschema.validate(doc["fabrics"], fabric_schema())
        assert all(h["guid"].startswith("0x") and len(h["guid"]) == 18 for h in doc["hosts"])


def test_single_switch_becomes_tor() -> None:
    text = "\n".join(
        [
            "switchguid=0x10",
            'Switch\t36 "S-0000000000000010"\t\t# "tor7 rack 4" enhanced port 0 lid 1 lmc 0',
            '[5]\t"H-0000000000000020"[1](21)\t\t# "n1 HCA-1" lid 2 4xEDR',
            "",
            "caguid=0x20",
            'Ca\t1 "H-0000000000000020"\t\t# "n1 HCA-1"',
            '[1](21) \t"S-0000000000000010"[5]\t\t# lid 2 lmc 0 "tor7 rack 4" lid 1 4xEDR',
        ]
    )
    imp = fabric.infer_fabric(fabric.parse_ibnetdiscover(text), "rack")
    assert imp.fabric["switches"] == [
        {"name": "tor7", "kind": "tor", "guid": "0x0000000000000010", "ports": 36}
    ]
    assert [(h.name, h.switch, h.leaf, h.port, h.guid) for h in imp.hosts] == [
        ("n1", "tor7", "", 5, "0x0000000000000021")
    ]


@pytest.mark.parametrize(
    ("desc", "hint"),
    [
        ("wfibcore1 Leaf L01", ("wfibcore1", "leaf", "L01")),
        ("wfibcore1 Spine 111A", ("wfibcore1", "spine", "111A")),
        ("MF0;core1:CS7520/L05/U1", ("core1", "leaf", "05")),
        ("MF0;core1:CS7520/S03/U1", ("core1", "spine", "03")),
        ("MF0;leaf01:MSB7700/U1", None),
        ("node01 HCA-1", None),
    ],
)
def test_director_chip_descriptions(desc: str, hint: tuple[str, str, str] | None) -> None:
    assert fabric.infer._chip_hint(desc) == hint


def test_parse_errors_carry_line_numbers() -> None:
    text = 'switchguid=0x10\nSwitch\t4 "S-0000000000000010"\nthis is not ibnetdiscover\n'
    with pytest.raises(InputError) as exc:
        fabric.parse_ibnetdiscover(text, "bad.txt")
    (d,) = exc.value.diagnostics
    assert (d.file, d.line, d.code) == ("bad.txt", 3, "E-IBNET")


def test_comments_only_are_not_an_empty_fabric() -> None:
    """A file of comments and blank lines was imported as a fabric with no switch."""
    with pytest.raises(InputError) as exc:
        fabric.parse_ibnetdiscover("#\n# Topology file: generated on ...\n\n", "c.txt")
    (d,) = exc.value.diagnostics
    assert (d.file, d.code) == ("c.txt", "E-IBNET-EMPTY") and "no 'Switch' or 'Ca'" in d.message


def test_one_sided_link_is_an_error() -> None:
    text = "\n".join(
        [
            "switchguid=0x10",
            'Switch\t4 "S-0000000000000010"\t\t# "a"',
            '[1]\t"S-0000000000000011"[1]\t\t# "b" lid 0 4xQDR',
            "",
            "switchguid=0x11",
            'Switch\t4 "S-0000000000000011"\t\t# "b"',
        ]
    )
    with pytest.raises(InputError, match="other end does not say so"):
        fabric.parse_ibnetdiscover(text)


@st.composite
def nets(draw: st.DrawFn) -> fabric.IbNet:
    """Small leaf/spine nets with random GUIDs, port numbers and descriptions."""
    n_leaf = draw(st.integers(1, 4))
    n_spine = draw(st.integers(0, 3))
    hosts = draw(st.lists(st.integers(0, 3), min_size=n_leaf, max_size=n_leaf))
    guids = draw(
        st.lists(
            st.integers(2, (1 << 63) - 1),
            min_size=n_leaf + n_spine + sum(hosts),
            max_size=n_leaf + n_spine + sum(hosts),
            unique_by=lambda g: g >> 1,
        )
    )
    word = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=8)
    it = iter(guids)
    leaf_g = [next(it) for _ in range(n_leaf)]
    spine_g = [next(it) for _ in range(n_spine)]
    links: dict[int, list[fabric.IbLink]] = {g: [] for g in leaf_g + spine_g}
    cas: list[fabric.IbNode] = []
    for i, lg in enumerate(leaf_g):
        for s, sg in enumerate(spine_g):
            links[lg].append(fabric.IbLink(20 + s, f"S-{sg:016x}", i + 1))
            links[sg].append(fabric.IbLink(i + 1, f"S-{lg:016x}", 20 + s))
        for h in range(hosts[i]):
            g = next(it) & ~1  # node GUID even, port GUID = node + 1
            links[lg].append(fabric.IbLink(h + 1, f"H-{g:016x}", 1))
            cas.append(
                fabric.IbNode(
                    "ca", g, 1, f"{draw(word)} ib0", (fabric.IbLink(1, f"S-{lg:016x}", h + 1),)
                )
            )
    sws = [
        fabric.IbNode("switch", g, 36, draw(word), tuple(sorted(links[g], key=lambda x: x.port)))
        for g in leaf_g + spine_g
    ]
    return fabric.IbNet((*sws, *cas))


def _canon(net: fabric.IbNet) -> list[tuple[object, ...]]:
    return sorted(
        (n.kind, n.guid, n.ports, n.desc, n.links, n.port_guid(1), n.sysimg_guid) for n in net.nodes
    )


@given(nets())
def test_render_then_parse_is_identity(net: fabric.IbNet) -> None:
    assert _canon(fabric.parse_ibnetdiscover(fabric.render_net(net, ["x"]))) == _canon(net)


# ----------------------------------------------------------------------------- IO placement


def test_wolf_same_port_warning() -> None:
    (d,) = fabric.io_port_findings(load_site(str(wolf_unrecorded()))[0])
    assert (d.severity, d.code, d.path) == (
        "warning",
        "W-IO-SAME-PORT",
        "$.routers[0].client.attach.port",
    )
    assert "24 IO nodes (wolf-io[01-24]) sit on port 18 of 24 different leaves" in d.message
    assert "plan-ports" in d.hint


def test_recorded_settings_silence_the_same_port_warning() -> None:
    """Every command warned that Wolf's IO nodes share one spine, although its recorded OpenSM
    settings route them apart (fabric check: 12x with none, 1.00x with them and with the port
    plan on top): the warning's claim did not hold on the configured fabric."""
    assert fabric.io_port_findings(site("wolf")) == []
    assert fabric.plan_ports(site("wolf"))  # the plan is still there for who wants it


def test_no_warning_without_ib_compute_fabric() -> None:
    assert fabric.io_port_findings(site("demo")) == []
    assert fabric.plan_ports(site("demo")) == []


def _moved_site(s: Site) -> Site:
    moves = {m.host: m.new for m in fabric.plan_ports(s)}
    routers = tuple(
        dataclasses.replace(r, client_attach=moves[r.name]) if r.name in moves else r
        for r in s.routers
    )
    return dataclasses.replace(s, routers=routers)


def test_port_plan_staggers_wolf() -> None:
    s = site("wolf")
    hosts = fabric.fabric_hosts(s, fabric.fabric_of(s))
    moves = fabric.plan_ports(s)
    assert len(moves) == 22  # two IO nodes may keep port 18 (24 IO nodes over 18 positions)
    for m in moves:
        assert m.old.leaf == m.new.leaf and m.old.port == 18 and m.swap.startswith("wolf")
    after = fabric.apply_moves(hosts, moves)
    positions = Counter((h.attach.port - 1) % 18 for h in after if h.kind == "router")
    assert len(positions) == 18 and max(positions.values()) == 2
    assert len({h.attach for h in after}) == len(after)  # no port used twice
    assert Counter(h.attach.leaf for h in after) == Counter(h.attach.leaf for h in hosts)
    assert fabric.io_port_findings(_moved_site(s)) == []
    assert fabric.plan_ports(_moved_site(s)) == []


# ----------------------------------------------------------------------------- OpenSM files


def _active(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln and not ln.startswith("#")]


def test_wolf_opensm_files_per_fabric() -> None:
    s = site("wolf")
    wolf_ib = fabric.fabric_of(s, "wolf-ib")
    comp = fabric_files(s, wolf_ib, "hdr", None)
    assert sorted(comp) == ["cn_guid_file", "io_guid_file", "opensm.conf", "root_guid_file"]
    io = _active(comp["io_guid_file"])
    assert len(io) == 24 and io[0] == "0x0011750a00000001  wolf-io01 ib0"
    cn = _active(comp["cn_guid_file"])
    assert len(cn) == 616 and all(ln.startswith("0x") and ln[18] == " " for ln in cn)
    root = [ln.split()[0] for ln in _active(comp["root_guid_file"])]
    assert root == sorted(s.switch("wfibcore1").spine_guids)  # type: ignore[union-attr]
    # nothing recorded: the guid files are there, but opensm.conf sets nothing
    assert _active(comp["opensm.conf"]) == []
    assert "lnetgen fabric check" in comp["opensm.conf"]
    # corrected facts (osm_ucast_ftree.c, osm_state_mgr.c, main.c in linux-rdma/opensm)
    assert "switch node GUID per line" in comp["root_guid_file"]
    assert "port GUID per line" in comp["io_guid_file"]
    for name in ("io_guid_file", "cn_guid_file", "root_guid_file"):
        assert "re-reads it on every\n# heavy sweep (SIGHUP starts one)" in comp[name], name
        assert "only at start" not in comp[name]

    chosen = OpenSMChoice(
        io_guid_file=True, cn_guid_file=True, root_guid_file=True, max_reverse_hops=1
    )
    conf = fabric_files(s, wolf_ib, "hdr", chosen)["opensm.conf"]
    assert _active(conf) == [
        "routing_engine ftree",
        "io_guid_file /etc/opensm/io_guid_file",
        "cn_guid_file /etc/opensm/cn_guid_file",
        "root_guid_file /etc/opensm/root_guid_file",
        "max_reverse_hops 1",
    ]
    assert "guid\n# files' contents are re-read on every heavy sweep" in conf
    only_io = fabric_files(s, wolf_ib, "hdr", OpenSMChoice(io_guid_file=True))["opensm.conf"]
    assert _active(only_io) == [
        "routing_engine ftree",
        "io_guid_file /etc/opensm/io_guid_file",
        "max_reverse_hops 0",
    ]

    stor = fabric_files(s, fabric.fabric_of(s, "lustre-ib"), "hdr", None)
    assert sorted(stor) == ["io_guid_file", "opensm.conf"]  # no spine GUIDs in wolf.yaml
    io = _active(stor["io_guid_file"])
    assert len(io) == 22 and all("lustre1-oss" in ln or "lustre1-mds" in ln for ln in io)


def test_generate_writes_only_recorded_opensm_settings(tmp_path: Path) -> None:
    """Spider as cabled: lnetgen's old opensm.conf (guid files + max_reverse_hops 1) made the
    busiest uplink 6x instead of 1.88x; by default generate now writes no setting, and what
    the inventory records is written exactly."""
    from lnetgen.api import generate

    spider = SITES / "spider.yaml"
    gen = generate(str(spider), formats="opensm")
    conf = {f.path: f.content for f in gen.files}["opensm/sion/opensm.conf"]
    assert _active(conf) == []
    text = spider.read_text().replace(
        "    role: storage\n",
        "    role: storage\n    opensm: {io_guid_file: true, max_reverse_hops: 1}\n",
        1,
    )
    recorded = tmp_path / "spider.yaml"
    recorded.write_text(text)
    gen = generate(str(recorded), formats="opensm")
    conf = {f.path: f.content for f in gen.files}["opensm/sion/opensm.conf"]
    assert _active(conf) == [
        "routing_engine ftree",
        "io_guid_file /etc/opensm/io_guid_file",
        "max_reverse_hops 1",
    ]


@pytest.mark.parametrize(
    ("opensm", "where"),
    [
        ("{cn_guid_file: true}", "cn_guid_file"),
        ("{root_guid_file: true}", "root_guid_file"),
    ],
)
def test_recorded_opensm_file_that_cannot_be_written_is_located(
    tmp_path: Path, opensm: str, where: str
) -> None:
    from lnetgen.inventory import check as inventory_check

    text = (
        (SITES / "spider.yaml")
        .read_text()
        .replace("    role: storage\n", f"    role: storage\n    opensm: {opensm}\n", 1)
    )
    path = tmp_path / "s.yaml"
    path.write_text(text)
    _site, diags = inventory_check(str(path))
    errs = [d for d in diags if d.code == "E-OPENSM"]
    assert errs and errs[0].path.endswith(f".opensm.{where}") and errs[0].line > 0


def test_generate_writes_opensm_per_fabric(tmp_path: Path) -> None:
    from lnetgen.api import generate

    gen = generate(str(SITES / "wolf.yaml"), formats="opensm")
    paths = sorted(f.path for f in gen.files if f.format == "opensm")
    assert paths == [
        "opensm/lustre-ib/io_guid_file",
        "opensm/lustre-ib/opensm.conf",
        "opensm/wolf-ib/cn_guid_file",
        "opensm/wolf-ib/io_guid_file",
        "opensm/wolf-ib/opensm.conf",
        "opensm/wolf-ib/root_guid_file",
    ]
    for f in gen.files:
        if f.format == "opensm":
            assert f.content.startswith("# generated by lnetgen") and f.content.endswith("\n")
            for ln in f.content.splitlines():
                if ln and ln[0] != "#" and "guid_file" in f.path:
                    assert ln.startswith("0x") and len(ln.split()[0]) == 18


def test_hosts_without_guid_are_left_out_and_named_by_the_inventory(tmp_path: Path) -> None:
    """The guid files leave out a host without a GUID; the inventory check names it, at its
    entry (W-NO-GUID used to come from the emitter at ``$``, without a line)."""
    from lnetgen.api import solve_site
    from lnetgen.emit.base import Context
    from lnetgen.emit.opensm import emit
    from lnetgen.inventory import check

    s, plan, _w = solve_site(str(SITES / "demo.yaml"))
    servers = tuple(dataclasses.replace(x, guid="") if x.name == "oss01" else x for x in s.servers)
    ctx = Context(plan, dataclasses.replace(s, servers=servers))
    files = {f.path: f.content for f in emit(ctx)}
    assert sorted(files) == ["opensm/storage-ib/io_guid_file", "opensm/storage-ib/opensm.conf"]
    assert "oss01" not in files["opensm/storage-ib/io_guid_file"]
    assert "oss02 ib0" in files["opensm/storage-ib/io_guid_file"]
    assert ctx.warnings == []
    text = (SITES / "demo.yaml").read_text()
    i = next(i for i, x in enumerate(s.servers) if x.name == "oss01")
    guid = s.servers[i].guid
    site = tmp_path / "demo.yaml"
    site.write_text(re.sub(rf",?\s*guid: \"?{guid}\"?", "", text, count=1, flags=re.I))
    _site, diags = check(str(site))
    (w,) = [d for d in diags if d.code == "W-NO-GUID"]
    assert w.path == f"$.servers[{i}]" and w.line > 0 and "oss01" in w.message, w.format()


# ----------------------------------------------------------------------------- commands


def test_cli_export_and_import_round_trip(tmp_path: Path) -> None:
    runner = CliRunner()
    net = tmp_path / "wolf.net"
    res = runner.invoke(command, ["export", str(SITES / "wolf.yaml"), "--out", str(net)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(command, ["import", "ibnetdiscover", str(net), "--role", "compute"])
    assert res.exit_code == 0, res.output
    doc = yaml.safe_load(res.stdout)
    assert doc["fabrics"][0]["name"] == "wolf"
    assert doc["fabrics"][0]["switches"][0]["spines"] == 18
    jsonschema.validate(doc["fabrics"], fabric_schema())


def test_cli_export_storage_fabric() -> None:
    res = CliRunner().invoke(
        command, ["export", str(SITES / "demo.yaml"), "--fabric", "storage-ib"]
    )
    assert res.exit_code == 0
    assert "core1 Leaf L01" in res.stdout and "core2 Spine S06" in res.stdout


def test_cli_export_unknown_fabric_exits_2() -> None:
    res = CliRunner().invoke(command, ["export", str(SITES / "demo.yaml"), "--fabric", "x"])
    assert res.exit_code == 2 and "no fabric 'x'" in res.output


def test_cli_plan_ports() -> None:
    res = CliRunner().invoke(command, ["plan-ports", str(wolf_unrecorded())])
    assert res.exit_code == 1  # the inventory's placement is a finding
    assert "W-IO-SAME-PORT" in res.output
    assert "wolf-io03        wfibcore1/L03:18     wfibcore1/L03:3" in res.output
    res = CliRunner().invoke(command, ["plan-ports", str(SITES / "demo.yaml")])
    assert res.exit_code == 0 and "no InfiniBand compute fabric" in res.output


def test_cli_check_skips_without_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simulate, "missing_tools", lambda: ["opensm", "libumad2sim.so"])
    res = CliRunner().invoke(command, ["check", str(SITES / "demo.yaml")])
    assert res.exit_code == 0
    assert "fabric check skipped: not installed: opensm, libumad2sim.so" in res.output
    assert "apt-get install opensm ibsim-utils infiniband-diags" in res.output


def test_cli_check_reports_a_bad_inventory_without_tools(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The inventory is checked before the tools: a bad one is exit 1, never a skip."""
    monkeypatch.setattr(simulate, "missing_tools", lambda: ["opensm"])
    bad = tmp_path / "bad.yaml"
    bad.write_text((SITES / "demo.yaml").read_text().replace("site: demo", "site: 7"))
    res = CliRunner().invoke(command, ["check", str(bad)])
    assert res.exit_code == 1, res.output
    assert "skipped" not in res.output


# ----------------------------------------------------------------------------- dump_fts

DUMP = """\
Unicast lids [0x0-0x4] of switch DR path slid 0; dlid 0; 0,1 guid 0x0011750300000001 (L01):
  Lid  Out   Destination
       Port     Info
0x0001 001 : (Channel Adapter portguid 0x0011750c00000000: 'n1 ib0')
0x0002 005 : (Switch portguid 0x0011750200000001: 'core Spine S01')
0x0003 000 : (Switch portguid 0x0011750300000001: 'core Leaf L01')
0x0004 006 : (Channel Adapter portguid 0x0011750c00000001: 'n2 ib0')
4 valid lids dumped
"""


def test_parse_dump_fts() -> None:
    tables, lids = trace.parse_dump_fts(DUMP)
    assert tables == {0x0011750300000001: {1: 1, 2: 5, 3: 0, 4: 6}}
    assert lids[0x0011750C00000001] == 4 and lids[0x0011750300000001] == 3


def test_check_result_json_shape() -> None:
    """Results are plain dataclasses (the CLI prints them; scripts may dump them)."""
    d = trace.Direction(routes=3, spine=[1, 2])
    assert json.loads(json.dumps(dataclasses.asdict(d)))["spine"] == [1, 2]


def test_alike_tor_switches_stay_apart() -> None:
    lines: list[str] = []
    for k in (1, 2):
        sw, ca = 0x10 * k, 0x100 * k
        lines += [
            f"switchguid={sw:#x}",
            f'Switch\t8 "S-{sw:016x}"\t\t# "switch" base port 0 lid 0 lmc 0',
            f'[1]\t"H-{ca:016x}"[1]({ca + 1:x})\t\t# "n{k} HCA-1" lid 0 4xEDR',
            "",
            f"caguid={ca:#x}",
            f'Ca\t1 "H-{ca:016x}"\t\t# "n{k} HCA-1"',
            f'[1]({ca + 1:x}) \t"S-{sw:016x}"[1]\t\t# lid 0 lmc 0 "switch" lid 0 4xEDR',
            "",
        ]
    imp = fabric.infer_fabric(fabric.parse_ibnetdiscover("\n".join(lines)), "racks")
    names = [s["name"] for s in imp.fabric["switches"]]
    assert names == ["switch", "switch-0000000000000020"]
    assert [(h.name, h.switch) for h in imp.hosts] == [
        ("n1", "switch"),
        ("n2", "switch-0000000000000020"),
    ]


def test_cli_check_locates_a_solver_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """fabric check solved the site itself: its solver errors said ``$`` with no line, where
    solve, generate and validate say ``file:line:col`` at the server of the leaf."""
    monkeypatch.setattr(simulate, "missing_tools", lambda: [])
    bad = tmp_path / "groups.yaml"
    bad.write_text((SITES / "demo.yaml").read_text().replace('oss: "4:3"', 'oss: "3:7"'))
    res = CliRunner().invoke(command, ["check", str(bad)])
    assert res.exit_code == 1, res.output
    lines = [ln for ln in res.output.splitlines() if "error[E-GROUPS]" in ln]
    assert lines and all(ln.startswith(f"{bad}:") and "$.servers[" in ln for ln in lines), lines


# ------------------------------------------------------------------- link width/speed labels


def test_link_labels_follow_the_site_rates() -> None:
    """Every link said 4xQDR, an HDR site's too; the label is now the generation of the
    site's ib_link (host links) and uplink (switch links), a placeholder where none fits."""
    from lnetgen.fabric.speeds import generation

    assert [generation(mb) for mb in (1000, 1500, 2000, 4000, 5000, 7000, 12500, 25000, 50000)] == [
        "4xSDR",
        "4xDDR",
        "4xDDR",
        "4xQDR",
        "4xQDR",
        "4xFDR",
        "4xEDR",
        "4xHDR",
        "4xNDR",
    ]
    assert generation(100_000) is None and generation(100) is None  # XDR; narrower than 4x
    hdr = fabric.export_ibsim(site("slingshot"))
    ports = [ln for ln in hdr.splitlines() if ln.startswith("[")]
    assert ports and all(ln.endswith(" lid 0 4xHDR") for ln in ports)
    assert "# link width/speed: host links 4xHDR (ib_link 25000 MB/s)" in hdr
    ddr = fabric.export_ibsim(site("spider"))
    assert "4xQDR" not in ddr and "switch links 4xDDR (uplink 2000 MB/s)" in ddr
    wolf = fabric.export_ibsim(site("wolf"))  # no rates: the placeholder, said so
    assert "host links 4xQDR (a placeholder: no rates.ib_link)" in wolf


def test_ibsim_parses_the_labels(tmp_path: Path) -> None:
    import shutil
    import subprocess

    if shutil.which("ibsim") is None:
        pytest.skip("ibsim is not installed")
    net = tmp_path / "hdr.net"
    net.write_text(fabric.export_ibsim(site("slingshot")))
    env = {"IBSIM_SOCKNAME": f"lnetgen-test-{tmp_path.name}", "PATH": "/usr/bin:/bin"}
    try:
        run = subprocess.run(
            ["ibsim", "-s", "-n", str(net)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=3,
            env=env,
        )
        out = run.stdout + run.stderr
    except subprocess.TimeoutExpired as exc:  # it serves until stopped: loaded by then
        out = (exc.stdout or b"").decode() + (exc.stderr or b"").decode()
    assert "MaxNetPorts" in out, out
    assert "cannot parse" not in out and "failed parsing" not in out, out
