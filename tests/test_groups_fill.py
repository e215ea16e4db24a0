"""How ``groups`` fills a leaf's N:M groups (``lnetgen.strategies.groups_fill``): a router on
every client net in every group, a group's routers close together on the torus, one file
system per group, backups of the same file system first.

The defects these pin (reviewers' journeys): a leaf with gni and tcp routers gave one group
only gni routers (coverage failed though a valid split existed); a leaf's routers were cut in
inventory order, so groups straddled opposite torus corners; a leaf holding two file systems'
OSS got one group numbered in neither file system's range, backed up by the other file
system; ``backup: next`` backed a home MDS group up with a scratch OSS group.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from conftest import ROOT

from lnetgen import topology
from lnetgen.api import solve_site
from lnetgen.inventory import load_site
from lnetgen.model import Site
from lnetgen.strategies.base import NetSpec
from lnetgen.strategies.groups import design

DEMO = ROOT / "sites" / "demo.yaml"
Doc = dict[str, Any]


def _site(tmp_path: Path, edit: Callable[[Doc], None], name: str = "site.yaml") -> str:
    """The demo inventory with ``edit`` applied, written to ``tmp_path``."""
    doc = yaml.safe_load(DEMO.read_text())
    edit(doc)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def _load(path: str) -> Site:
    site, diags = load_site(path)
    assert site is not None, [d.format() for d in diags]
    return site


def _by_name(specs: list[NetSpec]) -> dict[str, NetSpec]:
    return {s.group: s for s in specs}


def _router(doc: Doc, name: str) -> Doc:
    [r] = [r for r in doc["routers"] if r["name"] == name]
    return r  # type: ignore[no-any-return]


def _server(doc: Doc, name: str) -> Doc:
    [s] = [s for s in doc["servers"] if s["name"] == name]
    return s  # type: ignore[no-any-return]


# ---------------------------------------------------------------- a router on every client net


def _two_nets(doc: Doc) -> None:
    """A tcp login cluster; one tcp router on every leaf, and core2/L03 (two MDS groups of 2)
    holds two tcp routers listed first, so inventory order gave one group both."""
    doc["client_nets"].append({"name": "tcp", "interface": "eth0"})
    doc["clients"].append(
        {"name": "login", "nodes": "login[1-2]", "net": "tcp", "nid": {"ip": "192.168.1.101"}}
    )
    for k, name in enumerate(["rtr04", "rtr08", "rtr12", "rtr16", "rtr17", "rtr18"]):
        _router(doc, name)["client"] = {"nid": f"192.168.1.{k + 1}@tcp", "interface": "eth0"}


def test_every_group_gets_a_router_on_every_client_net(tmp_path: Path) -> None:
    path = _site(tmp_path, _two_nets)
    specs = _by_name(design(_load(path)))
    for name in ("core2/L03#1", "core2/L03#2"):
        assert {str(r.client_net) for r in specs[name].routers} == {"gni", "tcp"}, name
    _s, plan, _w = solve_site(path, "groups")  # the coverage guarantee holds (raised before)
    assert len(plan.storage_nets()) == 6


def test_a_client_net_the_leaf_cannot_give_every_group_goes_to_the_first(tmp_path: Path) -> None:
    """One tcp router for core2/L03's two groups: the first group gets it (the solver then
    names the group that lacks tcp), and the second still gets its two routers."""

    def edit(doc: Doc) -> None:
        _two_nets(doc)
        _router(doc, "rtr18")["client"] = {"nid": "218@gni", "interface": "ipogif0"}

    specs = _by_name(design(_load(_site(tmp_path, edit))))
    first, second = specs["core2/L03#1"], specs["core2/L03#2"]
    assert "tcp" in {str(r.client_net) for r in first.routers}
    assert {str(r.client_net) for r in second.routers} == {"gni"}
    assert len(first.routers) == len(second.routers) == 2


# ---------------------------------------------------------------- routers close on the torus


def _spread(site: Site, spec: NetSpec) -> int:
    assert site.torus is not None
    xyz = [r.coords for r in spec.routers]
    return int(topology.torus_hops(xyz, xyz, site.torus.dims).max())


def test_a_groups_routers_sit_together_not_in_inventory_order(tmp_path: Path) -> None:
    """core2/L03's four routers alternate between two corners of the torus (as two blades
    cabled port by port): each MDS group takes one corner's pair."""
    corners = {"rtr17": [0, 0, 0], "rtr18": [2, 2, 2], "rtr19": [1, 0, 0], "rtr20": [2, 2, 3]}

    def edit(doc: Doc) -> None:
        for name, xyz in corners.items():
            _router(doc, name)["coords"] = xyz

    site = _load(_site(tmp_path, edit))
    specs = _by_name(design(site))
    got = {tuple(r.name for r in specs[g].routers) for g in ("core2/L03#1", "core2/L03#2")}
    assert got == {("rtr17", "rtr19"), ("rtr18", "rtr20")}
    assert max(_spread(site, specs[g]) for g in ("core2/L03#1", "core2/L03#2")) == 1


def test_bluewaters_groups_stay_one_blade_each() -> None:
    """Seed 001: all four routers of a group on one XIO blade (two Geminis adjacent in Y, as
    the shipped inventory places them; it lists them blade by blade)."""
    site = _load(str(ROOT / "sites" / "bluewaters.yaml"))
    specs = design(site)
    assert len(specs) == 147
    for s in specs:
        chips = {r.coords for r in s.routers if r.coords is not None}
        assert len(chips) <= 2, s.group
        assert _spread(site, s) <= 1, s.group
    assert sum(len({r.coords for r in s.routers}) == 2 for s in specs) == 144


# ---------------------------------------------------------------- one file system per group


def _home_oss03(doc: Doc) -> None:
    """oss03 (core1/L01, with oss01-02 of scratch) moved to home."""
    _server(doc, "oss03")["fs"] = "home"
    _server(doc, "oss03")["osts"] = "100-103"


def test_a_leafs_file_systems_get_groups_of_their_own(tmp_path: Path) -> None:
    path = _site(tmp_path, _home_oss03)
    specs = design(_load(path))
    assert all(len({s.fs for s in spec.servers}) == 1 for spec in specs)
    leaf = [s for s in specs if s.module == ("core1", "L01")]
    assert [([x.name for x in s.servers], len(s.routers)) for s in leaf] == [
        (["oss03"], 2),
        (["oss01", "oss02"], 2),
    ]
    _s, plan, _w = solve_site(path, "groups")
    nets = {n.group: n for n in plan.storage_nets()}
    assert nets["core1/L01#1"].fs == "home" and nets["core1/L01#1"].name.startswith("o2ib2")
    assert nets["core1/L01#2"].fs == "scratch" and nets["core1/L01#2"].name.startswith("o2ib1")
    by_routers = {tuple(r.name for r in s.routers): s for s in specs}
    for s in specs:  # balanced backups stay in the file system
        assert by_routers[tuple(r.name for r in s.backup)].fs == s.fs, s.group


def test_a_mix_the_routers_force_is_kept_and_said(tmp_path: Path) -> None:
    """Spider's MDS leaf: 4 routers for the MDS of 3 file systems at "4:3"; three groups of
    at least 2 routers would need 6, so the group mixes them and its ``why`` says so."""
    specs = design(_load(str(ROOT / "sites" / "spider.yaml")))
    [mixed] = [s for s in specs if len({x.fs for x in s.servers}) > 1]
    assert mixed.group == "core1/L17#1" and len(mixed.routers) == 4
    assert "mixes file systems widow1, widow2, widow3" in mixed.why
    assert all("mixes" not in s.why for s in specs if s is not mixed)


def test_next_backup_prefers_the_same_file_system_over_the_same_role(tmp_path: Path) -> None:
    """``backup: next``: home's MDS group (core2/L03, no other home MDS group) is backed up by
    home's OSS group, not by the next scratch OSS group in plan order."""

    def edit(doc: Doc) -> None:
        doc["strategy"]["groups"]["backup"] = "next"

    specs = _by_name(design(_load(_site(tmp_path, edit))))
    [home_mds] = [s for s in specs.values() if s.servers[0].name == "mds02"]
    assert home_mds.backup == specs["core2/L02#1"].routers
    assert home_mds.why.endswith("backup core2/L02#1")
