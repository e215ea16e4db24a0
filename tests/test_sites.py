"""The shipped site inventories: all valid, the reference sites hold the papers' numbers, and
``sites/generate.py`` reproduces the generated ones byte for byte."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path

import pytest
from conftest import wolf_unrecorded

from lnetgen.diagnostics import Diagnostic, errors
from lnetgen.inventory import check
from lnetgen.model import Site

SITES_DIR = Path(__file__).resolve().parent.parent / "sites"
GENERATED = ("bluewaters.yaml", "slingshot.yaml", "spider.yaml", "wolf.yaml")
ALL_SITES = sorted(p.name for p in SITES_DIR.glob("*.yaml"))


@cache
def checked(name: str) -> tuple[Site | None, tuple[Diagnostic, ...]]:
    site, diags = check(str(SITES_DIR / name))
    return site, tuple(diags)


def site_of(name: str) -> Site:
    site, diags = checked(name)
    assert site is not None, [d.format() for d in diags]
    return site


def routers_per_module(site: Site) -> Counter[tuple[str, str]]:
    return Counter(r.attach.module for r in site.routers)


def servers_per_module(site: Site, role: str) -> Counter[tuple[str, str]]:
    return Counter(s.attach.module for s in site.servers if s.role == role)


def osts_per_fs(site: Site) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for s in site.servers:
        out[s.fs] += len(s.osts)
    return dict(out)


def all_guids(site: Site) -> list[str]:
    out = [g.lower() for g in site.clients.guids]
    for fabric in site.fabrics:
        for sw in fabric.switches:
            out += [g.lower() for g in (sw.guid, *sw.spine_guids) if g]
            out += [leaf.guid.lower() for leaf in sw.leaves if leaf.guid]
    for r in site.routers:
        out += [g.lower() for g in (r.guid, r.client_guid) if g]
    out += [s.guid.lower() for s in site.servers if s.guid]
    return out


# ----------------------------------------------------------------------------- every site


@pytest.mark.parametrize("name", ALL_SITES)
def test_site_validates_without_errors(name: str) -> None:
    _site, diags = checked(name)
    assert not errors(diags), "\n".join(d.format() for d in diags)


@pytest.mark.parametrize("name", ALL_SITES)
def test_site_identities_unique(name: str) -> None:
    site = site_of(name)
    guids = all_guids(site)
    assert len(guids) == len(set(guids))
    ips = [r.storage_ip for r in site.routers] + [s.ip for s in site.servers]
    ips += [
        nid.split("@")[0]
        for nid in (*site.clients.nids, *(r.client_nid for r in site.routers))
        if "." in nid.split("@")[0]
    ]
    assert len(ips) == len(set(ips))


@pytest.mark.parametrize("name", ["spider.yaml", "bluewaters.yaml"])
def test_no_warnings(name: str) -> None:
    # Blue Waters' MDS TORs hold 2 routers and its OSS TORs 8: by design, not a spread warning
    _site, diags = checked(name)
    assert [d.format() for d in diags] == []


def test_wolf_warns_about_io_nodes_on_one_port() -> None:
    # LANL's layout: all 24 IO nodes on port 18 -> OpenSM ftree puts them behind one spine;
    # the shipped site records the OpenSM settings that route them apart, and does not warn
    _site, diags = check(str(wolf_unrecorded()))
    assert {d.code for d in diags} == {"W-IO-SAME-PORT"}
    (d,) = diags
    assert d.line > 0 and "plan-ports" in d.hint
    assert [d.format() for d in checked("wolf.yaml")[1]] == []


# ----------------------------------------------------------------------------- generator


def test_generate_reproduces_committed_files(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(SITES_DIR / "generate.py"), str(tmp_path)], check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == list(GENERATED)
    for name in GENERATED:
        assert (tmp_path / name).read_bytes() == (SITES_DIR / name).read_bytes(), name


def test_generated_files_say_what_is_invented() -> None:
    for name in GENERATED:
        head = (SITES_DIR / name).read_text(encoding="utf-8").split("\nsite:")[0]
        assert head.startswith("# ")
        assert "From the paper" in head and "invented" in head
        assert "generate.py" in head


# ----------------------------------------------------------------------------- Spider


def test_spider_counts() -> None:
    site = site_of("spider.yaml")
    assert len(site.clients) == 18_688
    assert site.clients.names[0] == "nid00001" and site.clients.names[-1] == "nid18688"
    assert site.torus is not None
    assert site.torus.dims == (25, 32, 24) and site.torus.routing == "seastar"
    assert len(site.routers) == 196  # 192 paired with OSS + 4 on the MDS path
    assert Counter(s.role for s in site.servers) == {"oss": 192, "mds": 3}
    assert all(len(s.osts) == 7 for s in site.servers if s.role == "oss")
    assert osts_per_fs(site) == {"widow1": 672, "widow2": 336, "widow3": 336}
    assert Counter(s.fs for s in site.servers if s.role == "oss") == {
        "widow1": 96,
        "widow2": 48,
        "widow3": 48,
    }
    assert [f.mgs for f in site.filesystems] == ["widow1-mds01", "widow2-mds01", "widow3-mds01"]
    # OST indices of each file system start at 0 and have no holes
    by_fs: dict[str, set[int]] = defaultdict(set)
    for s in site.servers:
        by_fs[s.fs].update(s.osts)
    assert all(v == set(range(len(v))) for v in by_fs.values())
    # 32 OSS modules, 16 per core switch, each 6 routers + 6 OSS; the MDS module L17 of core1
    # holds the 4 MDS-path routers and the 3 MDS
    rpm, spm = routers_per_module(site), servers_per_module(site, "oss")
    mds_module = ("core1", "L17")
    assert set(rpm) == set(spm) | {mds_module} and len(spm) == 32
    assert set(spm.values()) == {6} and rpm.pop(mds_module) == 4 and set(rpm.values()) == {6}
    assert servers_per_module(site, "mds") == {mds_module: 3}
    assert Counter(m[0] for m in rpm) == {"core1": 16, "core2": 16}
    # an OSS module never mixes file systems (two 3:3 groups per module stay in one)
    fs_of_module = {(s.attach.module, s.fs) for s in site.servers if s.role == "oss"}
    assert len(fs_of_module) == 32
    coords = [r.coords for r in site.routers]
    assert len(set(coords)) == 196


# ----------------------------------------------------------------------------- Blue Waters


def test_bluewaters_counts() -> None:
    site = site_of("bluewaters.yaml")
    assert len(site.clients) == 25_712
    assert site.torus is not None
    assert site.torus.dims == (23, 24, 24) and site.torus.nodes_per_chip == 2
    assert len(site.routers) == 582
    # seed 001 Table I: two metadata servers per file system (an MDS and its failover partner)
    assert Counter(s.role for s in site.servers) == {"oss": 432, "mds": 6}
    assert {s.name: s.failover for s in site.servers if s.role == "mds"}["scratch-mds1"] == (
        "scratch-mds2"
    )
    assert site.rates.router is not None and site.rates.router.mb_s == 2600.0
    assert all(len(s.osts) == 4 for s in site.servers if s.role == "oss")
    assert osts_per_fs(site) == {"home": 144, "projects": 144, "scratch": 1440}
    assert {f.name: f.net_base for f in site.filesystems} == {
        "home": 1001,
        "projects": 2001,
        "scratch": 3001,
    }
    assert site.strategy.groups.oss == (4, 3) and site.strategy.groups.mds == (2, 2)
    rpm = routers_per_module(site)
    oss, mds = servers_per_module(site, "oss"), servers_per_module(site, "mds")
    assert len(oss) == 72 and set(oss.values()) == {6}  # 36 racks x left/right TOR
    assert all(rpm[m] == 8 for m in oss)  # two 4:3 groups per TOR
    assert len(mds) == 3 and set(mds.values()) == {2}
    assert all(rpm[m] == 2 for m in mds)
    assert set(oss).isdisjoint(mds)
    assert sum(rpm[m] for m in oss) == 576
    racks = Counter(s.fs for s in site.servers if s.role == "oss")
    assert racks == {"home": 36, "projects": 36, "scratch": 360}


def test_bluewaters_blades_on_adjacent_geminis() -> None:
    site = site_of("bluewaters.yaml")
    by_tor: dict[tuple[str, str], list[tuple[int, int, int]]] = defaultdict(list)
    for r in sorted(site.routers, key=lambda r: r.attach):
        assert r.coords is not None
        by_tor[r.attach.module].append(r.coords)
    geminis: Counter[tuple[int, int, int]] = Counter()
    for coords in by_tor.values():
        for g in range(0, len(coords), 4):
            blade = coords[g : g + 4]
            geminis.update(blade)
            if len(blade) == 4:  # one XIO blade: two Geminis, neighbours on the torus
                a, b = blade[0], blade[2]
                assert blade[1] == a and blade[3] == b
                assert sum(abs(p - q) for p, q in zip(a, b, strict=True)) == 1
    assert set(geminis.values()) == {2}  # every router Gemini holds two routers
    assert len(geminis) == 144 * 2 + 3


# ----------------------------------------------------------------------------- Wolf


def test_wolf_counts() -> None:
    site = site_of("wolf.yaml")
    assert len(site.clients) == 616
    assert site.client_fabric == "wolf-ib"
    assert len(site.clients.guids) == 616
    assert len(site.routers) == 24
    compute = site.switch("wfibcore1")
    assert compute is not None
    assert len(compute.leaves) == 36 and compute.spines == 18 and len(compute.spine_guids) == 18
    assert compute.guid
    # every IO node on port 18 of its own line card
    cards = [r.client_attach for r in site.routers]
    assert all(a is not None and a.port == 18 and a.switch == "wfibcore1" for a in cards)
    assert len({a.leaf for a in cards if a is not None}) == 24
    # 640 hosts on the 648 host ports, at most 18 per line card
    hosts = Counter(site.clients.leaves[k][1] for k in site.clients.leaf.tolist())
    hosts.update(a.leaf for a in cards if a is not None)
    assert sum(hosts.values()) == 640
    assert max(hosts.values()) <= 18
    # storage side: invented, 8 modules of 3 routers; 7 hold 3 OSS, the last the MDS; nets
    # clear of o2ib (0)
    assert Counter(s.role for s in site.servers) == {"oss": 21, "mds": 1}
    rpm, spm = routers_per_module(site), servers_per_module(site, "oss")
    assert len(spm) == 7 and set(spm.values()) == {3} and set(rpm.values()) == {3}
    assert servers_per_module(site, "mds") == {("lbcore1", "L08"): 1}
    assert site.strategy.storage_net_base == 100
    assert all(n.number == 0 and n.lnd == "o2ib" for n in site.clients.nets)


def test_slingshot_counts() -> None:
    site = site_of("slingshot.yaml")
    d = site.dragonfly
    assert d is not None and (d.groups, d.switches, d.global_links, d.edge_ports) == (8, 16, 32, 16)
    assert len(site.clients) == 8 * (16 * 16 - 4) == 2016
    assert {str(n) for n in site.clients.nets} == {"kfi"}
    assert site.clients.nids[0] == "1@kfi"
    assert len(site.routers) == 32
    # 4 routers per group, one on each of switches 3, 7, 11, 15
    places = Counter(r.dragonfly for r in site.routers)
    assert set(places.values()) == {1}
    assert {p for p in places if p is not None} == {
        (g, s) for g in range(8) for s in (3, 7, 11, 15)
    }
    # the 4 routers of a storage leaf sit in 4 different groups
    for module, count in routers_per_module(site).items():
        groups = {r.dragonfly[0] for r in site.routers if r.attach.module == module and r.dragonfly}
        assert count == 4 and len(groups) == 4, module
    # every switch full: 16 hosts, clients and routers together
    assert site.clients.switch is not None
    hosts = Counter(site.clients.switch.tolist())
    hosts.update(p[0] * 16 + p[1] for p in places if p is not None)
    assert set(hosts.values()) == {16} and len(hosts) == 128
    assert Counter(s.role for s in site.servers) == {"oss": 14, "mds": 2}
