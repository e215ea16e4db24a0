"""Routers whose tunables need LNet reloaded are reloaded in waves (``reload_waves``).

The defect: a router tunable that takes effect only when LNet is loaded again (per-NI
credits) was planned as one step for all routers, with "never all the gateways of a net at
once" left for the administrator to work out on a site of hundreds of routers.  Now the plan
gives the waves: none takes more than half of any host's gateways to one net.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen import nodes
from lnetgen.api import diff, generate, write_output
from lnetgen.cli import main
from lnetgen.diff import CLIENT, SERVER
from lnetgen.diff.paths import reload_waves
from lnetgen.diff.result import Paths, Peer

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "sites" / "demo.yaml"
CREDITS = "tunables:\n  roles:\n    router: {peer_credits: 32, credits: 1024}\n\n"
TITLE = "set LNet tunables"


def _primaries(paths: Paths) -> list[frozenset[str]]:
    """Each host's routers to each net at the best priority there (computed from ``want``
    and the priorities the test gave, not from ``Peer.best``)."""
    out = []
    for p in paths.peers:
        by_net: dict[str, set[str]] = {}
        for net, router, _g in p.best if p.best is not None else p.want:
            by_net.setdefault(net, set()).add(router)
        out.extend(frozenset(v) for v in by_net.values())
    return out


def _holds(paths: Paths, waves: list[list[str]]) -> None:
    for wave in waves:
        for g in _primaries(paths):
            if len(g) > 1:
                assert len(g & set(wave)) <= len(g) // 2, (sorted(g), wave)


ROUTERS = [f"rtr{i}" for i in range(1, 13)]


@st.composite
def _paths(draw: st.DrawFn) -> Paths:
    """Hosts with primaries (2 or more a net) and backups (any) to up to four nets."""
    peers = []
    for i in range(draw(st.integers(1, 6))):
        want, best = set(), set()
        for net in range(draw(st.integers(1, 4))):
            via = draw(st.sets(st.sampled_from(ROUTERS), min_size=2, max_size=8))
            backups = draw(st.sets(st.sampled_from(ROUTERS), max_size=6)) - via
            best |= {(f"o2ib{net}", r, f"{r}@gni") for r in via}
            want |= {(f"o2ib{net}", r, f"{r}@gni") for r in via | backups}
        role = CLIENT if i % 2 else SERVER
        peers.append(Peer(role, 1, frozenset(want), frozenset(want), frozenset(best)))
    return Paths(tuple(peers), {r: frozenset() for r in ROUTERS})


@settings(max_examples=200, deadline=None)
@given(_paths(), st.sets(st.sampled_from(ROUTERS), min_size=1))
def test_waves_cover_every_router_once_and_keep_half(paths: Paths, chosen: set[str]) -> None:
    waves = reload_waves(paths, sorted(chosen))
    flat = [r for w in waves for r in w]
    assert sorted(flat) == sorted(chosen) and len(flat) == len(set(flat))
    _holds(paths, waves)


def test_no_router_no_wave() -> None:
    assert reload_waves(Paths((), {}), []) == []


def credit_change(tmp_path: Path) -> tuple[Path, Path, list[dict[str, Any]]]:
    """The demo deployed (``tree``), its routers' credits raised (``after``), and the JSON
    steps of ``diff --plan-changes`` between them."""
    before = tmp_path / "before.yaml"
    before.write_text(DEMO.read_text(), encoding="utf-8")
    after = tmp_path / "after.yaml"
    after.write_text(DEMO.read_text().replace("client_nets:", CREDITS + "client_nets:", 1))
    tree = tmp_path / "tree"
    write_output(generate(str(before), None, "lnetctl"), str(tree))
    r = CliRunner().invoke(
        main, ["diff", str(after), "--live", str(tree), "--plan-changes", "--format", "json"]
    )
    assert r.exit_code == 1, r.output
    return after, tree, list(json.loads(r.stdout)["steps"])


def test_demo_router_credits_in_two_waves(tmp_path: Path) -> None:
    after, tree, all_steps = credit_change(tmp_path)
    steps = [s for s in all_steps if s["title"].startswith(TITLE)]
    assert [s["title"] for s in steps] == [TITLE, f"{TITLE} on routers, wave 2 of 2"]
    waves = [nodes.expand(s["hosts"]) for s in steps]
    assert sorted(n for w in waves for n in w) == nodes.expand("rtr[01-20]")
    assert "wave 1 of 2" in steps[0]["outage"] and "start wave 2 only once" in steps[0]["outage"]
    assert "wave 2 of 2" in steps[1]["outage"] and "start wave" not in steps[1]["outage"]
    result = diff(str(after), str(tree))
    assert result.paths is not None
    _holds(result.paths, waves)
    # against the plan itself: no wave takes more than half of a net's priority-0 routers
    # (the demo's groups: 4 primaries and 4 backups an OSS net, 2 + 2 an MDS net); counting
    # backups as gateways, wave 1 took all four primaries of o2ib100
    plan = json.loads((tree / "plan.json").read_text())
    for rs in plan["route_sets"]:
        primaries = {}
        for r in rs["routes"]:
            if r["priority"] == 0:
                primaries.setdefault(r["net"], set()).add(r["gateway"])
        for net, gws in primaries.items():
            for wave in waves:
                taken = {g for g in gws if f"rtr{int(g.split('@')[0]) - 200:02d}" in wave}
                assert len(gws) > 0 and len(taken) <= len(gws) // 2, (net, sorted(gws), wave)
