"""Backup groups as an optimisation (``groups.backup: balanced``), against lnetgen 0.1's
``next`` pairing: on Blue Waters ``next`` left 75 of 147 groups backing up nobody while others
backed up two, so one TOR failure put 3x the normal load on the routers of a backup group."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT

from lnetgen.api import solve_site
from lnetgen.inventory import load_site
from lnetgen.model import Server
from lnetgen.strategies.backup import assign_backups
from lnetgen.strategies.base import NetSpec
from lnetgen.strategies.groups import design
from lnetgen.traffic.flows import traffic
from lnetgen.traffic.index import index_plan
from lnetgen.traffic.routes import failed_mask

BW = ROOT / "sites" / "bluewaters.yaml"


def _variant(tmp: Path, backup: str) -> str:
    text = BW.read_text().replace("backup: balanced", f"backup: {backup}", 1)
    path = tmp / f"bw-{backup}.yaml"
    path.write_text(text)
    return str(path)


@cache
def _specs(path: str) -> list[NetSpec]:
    site, diags = load_site(path)
    assert site is not None, [d.format() for d in diags]
    return design(site)


def _backed(specs: list[NetSpec]) -> Counter[str]:
    """How many groups each group backs up (keyed by group name)."""
    by_routers = {tuple(r.name for r in s.routers): s.group for s in specs}
    return Counter(by_routers[tuple(r.name for r in s.backup)] for s in specs if s.backup)


def test_director_sites_back_up_on_the_other_switch() -> None:
    """Spider's widow1 groups: 17 on core1 (its MDS group, serving all three file systems,
    joins widow1's) and 16 on core2.  Each group backs up at most one, so one core1 group must
    be backed up on core1; every other backup is on the other switch."""
    specs = _specs(str(ROOT / "sites" / "spider.yaml"))
    assert all(s.backup for s in specs)
    same = [
        s.group
        for s in specs
        if {r.attach.switch for r in s.routers} & {r.attach.switch for r in s.backup}
    ]
    assert len(same) == 1
    assert set(_backed(specs).values()) == {1}


def test_bluewaters_every_group_has_one_backup_on_another_tor_and_backs_up_one() -> None:
    specs = _specs(str(BW))
    assert len(specs) == 147
    for s in specs:
        assert s.backup, s.group
        [home] = {r.attach.module for r in s.routers}
        [there] = {r.attach.module for r in s.backup}
        assert home != there, s.group  # one TOR failure does not take both
        owners = {o.fs for o in specs if tuple(o.routers) == tuple(s.backup) for _ in [0]}
        assert owners == {s.fs}, s.group  # never another file system's group
    backed = _backed(specs)
    assert set(backed.values()) == {1}, backed.most_common(3)
    assert len(backed) == 147
    routers = Counter(r.name for s in specs for r in s.backup)
    assert max(routers.values()) == 1  # no router backs up more than one group


def test_next_pairing_concentrated_the_backups(tmp_path: Path) -> None:
    """The defect, measured on the old pairing: kept as ``backup: next``."""
    backed = _backed(_specs(_variant(tmp_path, "next")))
    assert 147 - len(backed) == 75
    assert max(backed.values()) >= 2


def _worst_tor_failure(path: str) -> tuple[float, float]:
    """(normal busiest router, busiest router when one TOR's routers all fail) in flows, over
    the TORs of the ``home`` file system (its seven TORs keep the test fast; every TOR of the
    site gives the same figures: 3.0, 9.0 with ``next``, 6.0 balanced)."""
    site, plan, _ = solve_site(path, "groups")
    ix = index_plan(site, plan)
    R = len(ix.routers)
    normal = traffic(ix, np.zeros(R, dtype=bool), None).w_server.sum(axis=0).max()
    leaf = {r.name: r.leaf for r in plan.routers}
    worst = 0.0
    for tor in sorted(t for t in set(leaf.values()) if t.startswith("home")):
        mask = failed_mask(ix, [r for r in ix.routers if leaf[r] == tor])
        tr = traffic(ix, mask, None)
        assert tr.lost_w == 0, tor
        worst = max(worst, float(tr.w_server.sum(axis=0)[~mask[:R]].max()))
    return float(normal), worst


def test_bluewaters_worst_tor_failure_drops_from_3x_to_2x(tmp_path: Path) -> None:
    normal, before = _worst_tor_failure(_variant(tmp_path, "next"))
    _, after = _worst_tor_failure(str(BW))
    assert (normal, before, after) == (3.0, 9.0, 6.0)


def _spec(group: str, module: str, routers: int, osts: int, fs: str = "f", role: str = "oss"):
    from lnetgen.model import Attachment, Router

    att = Attachment(module, "", 1)  # a TOR: the switch is the module
    rtrs = [
        Router(f"{group}-r{i}", f"{i}@gni", None, "", "", "", "", att)  # type: ignore[arg-type]
        for i in range(routers)
    ]
    srv = Server(f"{group}-s", role, fs, "", "", "", att, osts=tuple(range(osts)))
    return NetSpec([srv], rtrs, (module, ""), group=group)  # type: ignore[list-item]


def test_hand_checked_bottleneck() -> None:
    """Three TORs; a heavy group (12 OSTs on 4 routers) and light ones (4 OSTs on 4 routers).
    Loads per router when h carries g: (load g + load h) / 4.  The heavy group must not be
    paired with the other heavy group (6 per router): every pairing of a heavy with a light one
    gives 4, so the optimum is 4 and both heavies back up, and are backed by, light groups."""
    specs = [
        _spec("a1", "A", 4, 12),
        _spec("a2", "A", 4, 4),
        _spec("b1", "B", 4, 12),
        _spec("b2", "B", 4, 4),
        _spec("c1", "C", 4, 4),
        _spec("c2", "C", 4, 4),
    ]
    out = assign_backups(specs, {"A": "ib", "B": "ib", "C": "ib"})
    names = {specs[i].group: specs[j].group for i, j in enumerate(out) if j is not None}
    assert len(names) == 6 and sorted(names.values()) == sorted(names)  # a permutation
    assert all(g[0] != b[0] for g, b in names.items())  # another TOR
    assert names["a1"] != "b1" and names["b1"] != "a1"
    worst = max(
        (len(specs[i].servers[0].osts) + len(specs[j].servers[0].osts)) / 4
        for i, j in enumerate(out)
        if j is not None
    )
    assert worst == 4.0


def test_single_tor_and_other_fs_get_no_backup() -> None:
    specs = [_spec("a1", "A", 2, 4), _spec("a2", "A", 2, 4), _spec("b1", "B", 2, 4, fs="g")]
    assert assign_backups(specs, {"A": "ib", "B": "ib"}) == [None, None, None]


def test_uneven_counts_share_as_evenly_as_they_allow() -> None:
    """Four groups on TOR A, one on TOR B: A's groups can only be backed by B's; B's by one of
    A's.  Every group gets a backup; B carries four (the counts allow no better)."""
    specs = [_spec(f"a{i}", "A", 2, 2) for i in range(4)] + [_spec("b0", "B", 2, 2)]
    out = assign_backups(specs, {"A": "ib", "B": "ib"})
    assert all(j is not None for j in out)
    assert Counter(specs[j].group for j in out if j is not None)["b0"] == 4


# ------------------------------------------------------------------- failure loads (analyze)


@cache
def _index(site: str, strategy: str):  # type: ignore[no-untyped-def]
    s, plan, _ = solve_site(str(ROOT / "sites" / f"{site}.yaml"), strategy)
    return index_plan(s, plan)


@pytest.mark.parametrize("strategy", ["groups", "nearest-neighbor", "projection", "baseline"])
def test_incremental_failure_loads_equal_the_full_traffic(strategy: str) -> None:
    """Re-evaluating only the pairs through failed routers gives the full model's loads."""
    from lnetgen.analyze.failures import router_write_flows

    ix = _index("demo", strategy)
    rng = np.random.default_rng(7)
    R = len(ix.routers)
    for _ in range(20):
        mask = rng.random(R) < 0.25
        full = traffic(ix, mask, None).w_server.sum(axis=0)
        fast = router_write_flows(ix, mask)
        assert np.allclose(fast[~mask], full[~mask]), strategy


def test_worst_failures_on_demo_groups() -> None:
    """Hand-checked: 3 flows per router (12 OSTs over 4 routers); one router down puts 4 on
    each of its 3 group mates.  A leaf module or switch fails physically: core1/L01 down takes
    its 3 OSS (12 flows) with its routers, so nothing moves to the backup (3 on the busiest, 0
    without a route, 12 lost with their servers); core1 down takes 6 OSS (24 flows).  Its
    routers alone down (rtr[01-04]) put the group's 12 flows on its backup, core2/L01's 4
    routers: 3 + 3 each."""
    from lnetgen.analyze import worst_failures
    from lnetgen.analyze.failures import named_failure

    ix = _index("demo", "groups")
    got = {w.scope: (w.flows, w.normal, w.lost, w.down) for w in worst_failures(ix)}
    assert got == {
        "router": (4.0, 3.0, 0.0, 0.0),
        "leaf": (3.0, 3.0, 0.0, 12.0),
        "switch": (3.0, 3.0, 0.0, 24.0),
    }
    w = named_failure(ix, ["rtr01", "rtr02", "rtr03", "rtr04"])
    assert w is not None and (w.flows, w.lost, w.down) == (6.0, 0.0, 0.0)


def test_analyze_and_compare_print_the_failure_load() -> None:
    from click.testing import CliRunner

    from lnetgen.cli import main

    site = str(ROOT / "sites" / "demo.yaml")
    out = CliRunner().invoke(main, ["analyze", site, "-s", "groups"]).output
    assert (
        "worst single leaf failure (core1/L01): busiest router rtr05 carries 3.00 write flows, "
        "1.00x the busiest with all up (3.00), 12 lost with their servers"
    ) in out
    out = CliRunner().invoke(main, ["analyze", site, "-s", "groups", "--fail", "core1/L01"]).output
    assert "with the failed routers and servers down: busiest router rtr05 carries 3.00" in out
    out = CliRunner().invoke(main, ["analyze", site, "-s", "groups", "--fail", "rtr[01-04]"]).output
    assert "with the failed routers down: busiest router rtr09 carries 6.00 write flows" in out
    res = CliRunner().invoke(main, ["compare", site, "--strategies", "groups,projection"])
    rows = {
        ln.split()[0]: next(w for w in ln.split() if "x/" in w)
        for ln in res.output.splitlines()[1:3]
    }
    assert rows == {"groups": "1.33x/0", "projection": "1.00x/4"}
