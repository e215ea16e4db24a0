"""A deployable file system: servers reach each other (server net), the MGS, failover partners
and MDT indices are modeled and emitted (manifest, README.txt, mkfs.lustre, mount), fields that
used to be ignored are honoured, and validate dry-solves the default strategy."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from lnetgen import nodes
from lnetgen.api import generate
from lnetgen.cli import main
from lnetgen.drysolve import dry_solve
from lnetgen.guarantees import check_guarantees
from lnetgen.inventory import check, load_site
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.resources import schema
from lnetgen.solve import solve, strategy_names

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"
DEMO = ROOT / "sites" / "demo.yaml"


@cache
def site(name: str) -> Site:
    return load_site(str(ROOT / "sites" / f"{name}.yaml"))[0]


@cache
def plan(name: str, strategy: str) -> Plan:
    return solve(site(name), strategy)


def _write(tmp: Path, doc: dict[str, object], name: str = "site.yaml") -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _demo() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(DEMO.read_text())


# ------------------------------------------------------------------ servers reach each other


@pytest.mark.parametrize("strategy", strategy_names())
@pytest.mark.parametrize("name", ["demo", "bluewaters"])
def test_every_oss_mds_pair_shares_a_net(name: str, strategy: str) -> None:
    """Before the server net, no OSS reached an MDS of its file system in any leaf-local layout
    (demo 0 of 12 pairs, bluewaters 0 of 432 -- 864 since the site has seed 001's two
    metadata servers per file system)."""
    p = plan(name, strategy)
    nets = {s.name: set(s.networks) for s in p.servers}
    oss = [s for s in p.servers if s.role == "oss"]
    mds = [s for s in p.servers if s.role == "mds"]
    pairs = [(o.name, m.name) for o in oss for m in mds if o.fs == m.fs]
    assert len(pairs) == {"demo": 12, "bluewaters": 864}[name]
    assert [pr for pr in pairs if not nets[pr[0]] & nets[pr[1]]] == []


@pytest.mark.parametrize("strategy", strategy_names())
def test_server_net_is_for_servers_only(strategy: str) -> None:
    p = plan("demo", strategy)
    server_nets = {n.name for n in p.server_nets()}
    assert server_nets == (set() if strategy == "baseline" else {"o2ib"})
    for r in p.routers:
        assert not server_nets & set(r.networks)
    for cc in p.client_classes:
        assert not any(r.net in server_nets for r in cc.routes)
    for sr in p.server_routes:
        assert not any(r.net in server_nets for r in sr.routes)
    for s in p.servers:  # same interface and IP on both nets
        if s.server_nid:
            assert s.server_nid.split("@")[0] == s.nid.split("@")[0]


def test_server_net_in_emitted_files() -> None:
    files = {f.path: f.content for f in generate(str(DEMO), "projection").files}
    assert 'networks="o2ib100(ib0),o2ib(ib0)"' in files["modprobe/oss01.conf"]
    doc = yaml.safe_load(files["lnetctl/oss01.yaml"])
    assert [n["net type"] for n in doc["net"]] == ["o2ib100", "o2ib"]
    router = yaml.safe_load(files["lnetctl/rtr01.yaml"])
    assert "o2ib" not in [n["net type"] for n in router["net"]]


def test_guarantees_catch_servers_apart_and_an_unreachable_mgs() -> None:
    import dataclasses

    p = plan("demo", "groups")
    cut = dataclasses.replace(
        p,
        servers=tuple(dataclasses.replace(s, server_net="", server_nid="") for s in p.servers),
    )
    assert any(m.startswith("servers: ") for m in check_guarantees(cut))
    probs = check_guarantees(p, mgs={"scratch": ["nosuch"]})
    assert probs == ["mgs: nosuch of scratch is not a server of the plan"]
    lost = dataclasses.replace(
        p,
        client_classes=tuple(
            dataclasses.replace(c, routes=tuple(r for r in c.routes if r.net != "o2ib103"))
            for c in p.client_classes
        ),
    )
    probs = check_guarantees(lost, mgs={"scratch": ["mds01"]})
    assert any(m.startswith("mgs: class") for m in probs)


def test_server_net_number_given_and_checked(tmp_path: Path) -> None:
    doc = _demo()
    doc["fabrics"][0]["server_net"] = 7
    p = solve(load_site(str(_write(tmp_path, doc)))[0], "groups")
    assert [n.name for n in p.server_nets()] == ["o2ib7"]
    doc["fabrics"][0]["server_net"] = 201  # inside home's range o2ib200-o2ib203
    _, diags = check(str(_write(tmp_path, doc)))
    assert [d.code for d in diags] == ["E-NET-COLLIDE"]
    assert diags[0].path == "$.fabrics[0].server_net" and diags[0].line > 0


# ------------------------------------------------------------------ fields honoured


def test_client_interface_gets_its_own_class(tmp_path: Path) -> None:
    """A group on another interface used to share its net's class (and its networks= line)."""
    doc = _demo()
    doc["clients"] = [
        {"name": "compute", "nodes": "nid[00001-00064]", "net": "gni", "nid": "number"},
        {
            "name": "gpu",
            "nodes": "nid[00065-00096]",
            "net": "gni",
            "nid": "number",
            "interface": "ipogif1",
        },
    ]
    p = solve(load_site(str(_write(tmp_path, doc)))[0], "groups")
    by_iface = {c.interface: c for c in p.client_classes}
    assert set(by_iface) == {"ipogif0", "ipogif1"}
    assert by_iface["ipogif1"].members == "nid[00065-00096]"
    files = {f.path: f.content for f in generate(str(tmp_path / "site.yaml"), "groups").files}
    gpu = next(t for k, t in files.items() if k.startswith("modprobe/") and "nid[00065" in t)
    assert 'networks="gni(ipogif1)"' in gpu


def test_projection_solves_per_client_net() -> None:
    """gni and tcp clients with routers on both: projection used to pair each server with one
    router only and fail with E-GUARANTEE at $."""
    s = load_site(str(CASES / "valid" / "two-client-nets" / "site.yaml"))[0]
    p = solve(s, "projection")
    for cc in p.client_classes:
        assert {r.net for r in cc.routes} == {n.name for n in p.storage_nets()}


def test_baseline_has_one_storage_net_per_fabric() -> None:
    """Blue Waters: every one of the 582 gateway/net pairs used to cross fabrics."""
    s = site("bluewaters")
    p = plan("bluewaters", "baseline")
    fabric_of_switch = {sw.name: f.name for f in s.fabrics for sw in f.switches}
    router_fabric = {r.name: fabric_of_switch[r.attach.switch] for r in s.routers}
    server_fabric = {v.name: v.fabric for v in s.servers}
    nets = p.storage_nets()
    assert len(nets) == 3
    for n in nets:
        fabrics = {server_fabric[x] for x in n.servers}
        assert len(fabrics) == 1
        assert {router_fabric[r] for r in n.routers} == fabrics


def test_file_system_without_mds_is_located(tmp_path: Path) -> None:
    doc = _demo()
    doc["servers"] = [v for v in doc["servers"] if v["name"] != "mds02"]
    path = _write(tmp_path, doc)
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1
    line = next(ln for ln in result.output.splitlines() if "E-FS-NO-MDS" in ln)
    assert "$.filesystems[1].name: file system home" in line
    assert line.startswith(f"{path}:")


# ------------------------------------------------------------------ dry solve


def test_dry_solve_locates_a_groups_error(tmp_path: Path) -> None:
    text = (CASES / "valid" / "two-client-nets" / "site.yaml").read_text()
    path = tmp_path / "site.yaml"
    path.write_text(text.replace("default: projection", "default: groups"))
    got, diags = dry_solve(str(path))
    assert got is None
    (err,) = [d for d in diags if d.severity == "error"]
    assert err.code == "E-GROUPS" and err.path == "$.servers[2].attach" and err.line > 0
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1 and "error[E-GROUPS] $.servers[2].attach" in result.output


def test_dry_solve_notes_the_other_strategies() -> None:
    got, diags = dry_solve(str(CASES / "valid" / "two-client-nets" / "site.yaml"))
    assert got is not None
    notes = {d.message.split()[1]: d for d in diags if d.severity == "info"}
    assert set(notes) == set(strategy_names()) - {"projection"}
    assert "does not apply" in notes["groups"].message
    assert "also applies" in notes["baseline"].message
    assert all(d.code == "I-STRATEGY" and d.path == "$.strategy.default" for d in notes.values())
    out = CliRunner().invoke(main, ["validate", "--format", "json", str(DEMO)])
    assert out.exit_code == 0 and json.loads(out.output)["infos"] == 4


# ------------------------------------------------------------------ MGS, failover, DNE, manifest


@pytest.mark.parametrize("strategy", strategy_names())
def test_manifest_validates_against_its_schema(strategy: str) -> None:
    gen = generate(str(DEMO), strategy)
    files = {f.path: f.content for f in gen.files}
    manifest = json.loads(files["manifest.json"])
    jsonschema.validate(manifest, schema("manifest.schema.json"))
    assert "README.txt" in [f["path"] for f in manifest["files"]]
    assert files["README.txt"].startswith("# generated by lnetgen ")


@pytest.mark.parametrize("name", ["wolf", "bluewaters", "spider"])
def test_manifest_of_the_large_sites_validates(name: str) -> None:
    gen = generate(str(ROOT / "sites" / f"{name}.yaml"), "groups", "lnetctl")
    manifest = json.loads(next(f.content for f in gen.files if f.path == "manifest.json"))
    jsonschema.validate(manifest, schema("manifest.schema.json"))
    assert set(manifest["filesystems"]) == {f.name for f in gen.site.filesystems}
    oss = sum(1 for s in gen.site.servers if s.role == "oss")
    listed = {s["name"] for f in manifest["filesystems"].values() for s in f["servers"]}
    assert sum(1 for n in listed if gen.site.server(n).role == "oss") == oss


def test_manifest_file_systems_and_client_nids() -> None:
    gen = generate(str(DEMO), "groups")
    manifest = json.loads(next(f.content for f in gen.files if f.path == "manifest.json"))
    assert manifest["server_nets"] == {"storage-ib": "o2ib"}
    storage = {n.name for n in gen.plan.storage_nets()}
    scratch = manifest["filesystems"]["scratch"]
    assert scratch["mgs"] == "mds01"
    assert scratch["mount"] == ":".join(scratch["mgs_nids"]) + ":/scratch"
    for s in scratch["servers"]:
        assert s["nids"][0] == s["client_nids"][0]
        assert all(n.split("@")[1] in storage for n in s["client_nids"])
        assert [n.split("@")[1] for n in s["nids"][1:]] == ["o2ib"]
    assert all(n.split("@")[1] in storage for n in scratch["mgs_nids"])
    entries = {f["path"]: f for f in manifest["files"]}
    assert entries["lnetctl/oss10.yaml"]["fs"] == ["home"]
    assert entries["lnetctl/clients-gni.yaml"]["fs"] == ["scratch", "home"]
    net_fs = {n.name: n.fs for n in gen.plan.storage_nets()}
    for r in gen.plan.routers:  # a router serves the file systems of its storage nets
        want = {net_fs[i.net] for i in r.interfaces if i.net in net_fs}
        assert set(entries[f"lnetctl/{r.name}.yaml"]["fs"]) == want


def test_failover_mgs_and_dne_reach_mkfs_and_mount(tmp_path: Path) -> None:
    doc = _demo()
    servers = {v["name"]: v for v in doc["servers"]}
    servers["oss01"]["failover"] = "oss02"
    servers["oss02"]["failover"] = "oss01"
    doc["servers"].append(
        {
            "name": "mds03",
            "role": "mds",
            "fs": "scratch",
            "ip": "10.10.2.3",
            "interface": "ib0",
            "attach": {"switch": "core2", "leaf": "L03", "port": 7},
            "failover": "mds01",
        }
    )
    servers["mds01"]["failover"] = "mds03"
    doc["strategy"]["groups"]["mds"] = "2:2"
    doc["strategy"]["default"] = "projection"
    path = _write(tmp_path, doc)
    gen = generate(str(path))
    manifest = json.loads(next(f.content for f in gen.files if f.path == "manifest.json"))
    scratch = manifest["filesystems"]["scratch"]
    nid = {s.name: s.nid for s in gen.plan.servers}
    assert scratch["mgs_nids"] == [nid["mds01"], nid["mds03"]]
    mount = f"{nid['mds01']}:{nid['mds03']}:/scratch"
    assert scratch["mount"] == mount
    by_name = {s["name"]: s for s in scratch["servers"]}
    assert [t["name"] for t in by_name["mds03"]["targets"]] == ["scratch-MDT0001"]
    assert by_name["oss01"]["failover"] == "oss02"
    mkfs = by_name["oss01"]["targets"][0]["mkfs"]
    service = f"--servicenode={nid['oss01']},10.10.1.1@o2ib --servicenode={nid['oss02']},"
    assert service + "10.10.1.2@o2ib " in mkfs
    mgsnode = f"--mgsnode={nid['mds01']},10.10.2.1@o2ib --mgsnode={nid['mds03']},10.10.2.3@o2ib "
    assert mgsnode in mkfs
    readme = next(f.content for f in gen.files if f.path == "README.txt")
    assert f"mount -t lustre {mount} /mnt/scratch" in readme


def test_readme_says_which_file_goes_where() -> None:
    gen = generate(str(DEMO), "nearest-neighbor")
    readme = next(f.content for f in gen.files if f.path == "README.txt")
    for cc in gen.plan.client_classes:
        assert f"{cc.name} ({cc.count} on {cc.net}, {cc.interface}): {cc.members}" in readme
        assert f"lnetctl/{cc.name}.yaml" in readme
    assert "LNet routers (20): rtr[01-20]" in readme
    assert "lnetctl/<router>.yaml" in readme and "lnetctl/<server>.yaml" in readme
    assert "o2ib on storage fabric storage-ib" in readme
    assert readme.index("1. Routers") < readme.index("2. Servers") < readme.index("4. Clients")
    names = {h for f in gen.files for h in nodes.expand(f.hosts) if f.hosts}
    assert "mds01" in names
