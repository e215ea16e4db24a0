"""Every shipped site solves with every strategy, and the plan keeps the FGR guarantees."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from lnetgen import nodes
from lnetgen.guarantees import check_guarantees
from lnetgen.inventory import load_site
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.solve import solve, strategy_names
from lnetgen.strategies import REGISTRY, SolveError

ROOT = Path(__file__).resolve().parent.parent
SITES = sorted(p.stem for p in (ROOT / "sites").glob("*.yaml"))


@cache
def site(name: str) -> Site:
    return load_site(str(ROOT / "sites" / f"{name}.yaml"))[0]


@cache
def plan(name: str, strategy: str) -> Plan:
    return solve(site(name), strategy)


@pytest.mark.parametrize("strategy", strategy_names())
@pytest.mark.parametrize("name", SITES)
def test_guarantees_hold(name: str, strategy: str) -> None:
    p = plan(name, strategy)
    assert check_guarantees(p, leaf_local=REGISTRY[strategy].leaf_local) == []
    s = site(name)
    # every client is in exactly one class
    members = Counter(n for cc in p.client_classes for n in nodes.expand(cc.members))
    assert len(members) == len(s.clients) and set(members.values()) == {1}
    assert sum(cc.count for cc in p.client_classes) == len(s.clients)
    # every route: single gateway NID, hop 1
    for cc in p.client_classes[:50]:
        for r in cc.routes:
            assert r.hop == 1 and "[" not in r.gateway


def test_plan_round_trips_through_json() -> None:
    p = plan("demo", "groups")
    again = Plan.from_json(p.to_json())
    assert again.to_json() == p.to_json()


def test_spider_figures() -> None:
    # 192 OSS nets + one per MDS; 32 OSS modules + the MDS module
    assert len(plan("spider", "projection").storage_nets()) == 195
    assert len(plan("spider", "round-robin").storage_nets()) == 33
    assert len(plan("spider", "nearest-neighbor").storage_nets()) == 33


def test_bluewaters_groups() -> None:
    p = plan("bluewaters", "groups")
    oss_groups = [n for n in p.storage_nets() if len(n.primary_routers) == 4]
    assert len(oss_groups) == 144
    by_fs = Counter(n.fs for n in oss_groups)
    assert by_fs == {"home": 12, "projects": 12, "scratch": 120}
    assert all(len(n.servers) == 3 for n in oss_groups)
    # the example name: o2ib3037 is one of SCRATCH's groups
    assert p.network("o2ib3037").fs == "scratch"
    # a backup group is on the same fabric, another TOR, and reached at priority 1
    cc = p.client_classes[0]
    prio = {r.priority for r in cc.routes if r.net == "o2ib3037"}
    assert prio == {0, 1}


def _primary_load(p: Plan) -> dict[tuple[str, str], int]:
    by_nid = p.router_by_nid()
    load: Counter[tuple[str, str]] = Counter()
    for cc in p.client_classes:
        for r in cc.routes:
            if r.priority == 0:
                load[(r.net, by_nid[r.gateway].name)] += cc.count
    return load


@pytest.mark.parametrize("name", SITES)
def test_round_robin_balance(name: str) -> None:
    p = plan(name, "round-robin")
    load = _primary_load(p)
    for net in p.storage_nets():
        counts = [load[(net.name, r)] for r in net.primary_routers]
        assert max(counts) - min(counts) <= 1, (net.name, counts)


@pytest.mark.parametrize("name", ["demo", "wolf", "spider"])
def test_nearest_neighbor_capacity_and_not_worse_than_round_robin(name: str) -> None:
    p = plan(name, "nearest-neighbor")
    load = _primary_load(p)
    n = len(site(name).clients)
    for net in p.storage_nets():
        cap = math.ceil(n / len(net.primary_routers))
        assert max(load[(net.name, r)] for r in net.primary_routers) <= cap
    if site(name).torus is not None:
        assert p.stats["total_hops"] < plan(name, "round-robin").stats["total_hops"]


def test_nearest_neighbor_is_optimal_on_demo() -> None:
    """Brute force on demo: no single swap of two clients' routers in a set lowers the hops
    (a necessary condition), and the total equals networkx's min-cost flow."""
    import networkx as nx

    from lnetgen import topology

    s = site("demo")
    p = plan("demo", "nearest-neighbor")
    assert s.torus is not None
    total = 0
    for net in p.storage_nets():
        routers = [s.router(r) for r in net.primary_routers]
        cost = topology.torus_hops(
            s.clients.coords, np.asarray([r.coords for r in routers]), s.torus.dims
        )
        cap = math.ceil(len(s.clients) / len(routers))
        g = nx.DiGraph()
        for i in range(len(s.clients)):
            g.add_node(("c", i), demand=-1)
            for j in range(len(routers)):
                g.add_edge(("c", i), ("r", j), weight=int(cost[i, j]), capacity=1)
        for j in range(len(routers)):
            g.add_edge(("r", j), "t", weight=0, capacity=cap)
        g.add_node("t", demand=len(s.clients))
        total += nx.min_cost_flow_cost(g)
    assert p.stats["total_hops"] == total


def test_groups_error_names_leaf_and_counts(tmp_path: Path) -> None:
    text = (ROOT / "sites" / "demo.yaml").read_text()
    text = text.replace('oss: "4:3"', 'oss: "3:3"')
    bad = tmp_path / "site.yaml"
    bad.write_text(text)
    with pytest.raises(SolveError) as exc:
        solve(load_site(str(bad))[0], "groups")
    msg = str(exc.value)
    assert "core1/L01" in msg and "4 routers" in msg and "need exactly 3" in msg


def test_plan_is_identical_under_different_hash_seeds(tmp_path: Path) -> None:
    outs = []
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        code = (
            "import sys; from lnetgen.inventory import load_site; "
            "from lnetgen.solve import solve; "
            "sys.stdout.write(solve(load_site(sys.argv[1])[0], sys.argv[2]).to_json())"
        )
        res = subprocess.run(
            [sys.executable, "-c", code, str(ROOT / "sites/demo.yaml"), "nearest-neighbor"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outs.append(res.stdout)
    assert outs[0] == outs[1] == outs[2]
    json.loads(outs[0])


def test_solver_errors_are_located_as_validate_locates_them(tmp_path: Path) -> None:
    """``solve`` and ``generate`` give a solver error (E-GROUPS) the line, column and path
    ``validate`` gives it (the first server on the leaf), not ``$`` at line 0; with another
    ``--strategy`` than the default too, and with the inventory's warnings beside it."""
    from click.testing import CliRunner

    from lnetgen.cli import main

    text = (ROOT / "sites" / "demo.yaml").read_text()
    bad = tmp_path / "site.yaml"
    bad.write_text(text.replace('oss: "4:3"', 'oss: "3:3"'))
    want = [
        ln
        for ln in CliRunner().invoke(main, ["validate", str(bad)]).output.splitlines()
        if "error[E-GROUPS]" in ln
    ]
    assert want and all(f"{bad}:" in ln and "$.servers[" in ln for ln in want), want
    runs = {
        "solve": ["solve", str(bad)],
        "generate": ["generate", str(bad), "--out", str(tmp_path / "out")],
        "place": ["place", "clients", str(bad), "--oss", "oss01"],
    }
    for name, args in runs.items():
        res = CliRunner().invoke(main, args)
        got = [ln for ln in res.output.splitlines() if "error[E-GROUPS]" in ln]
        assert res.exit_code == 1 and got == want, (name, res.output)
    other = bad.read_text().replace("default: groups", "default: projection")
    bad.write_text(other)
    res = CliRunner().invoke(main, ["solve", str(bad), "--strategy", "groups", "--format", "json"])
    diags = json.loads(res.stdout)["diagnostics"]
    assert res.exit_code == 1
    assert [d["path"] for d in diags if d["code"] == "E-GROUPS"] == [
        ln.split()[2].rstrip(":") for ln in want
    ]
    assert all(d["line"] > 0 for d in diags)
