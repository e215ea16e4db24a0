"""``analyze --fail SERVER`` fails that server, under every strategy.

Reviewer F: ``--fail oss01`` on a projection plan failed oss01's routers (projection names
each net's group after its OSS) and left oss01 up; every other strategy refused the name
(E-FAIL-NAME).  A server named is now down on its own: its targets move to a live failover
partner (which carries their load as well as its own) or are lost (exit 1).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from click.testing import CliRunner

from lnetgen.analyze import analyze
from lnetgen.cli import main
from lnetgen.inventory import load_site
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.solve import solve, strategy_names
from lnetgen.traffic.routes import resolve_down

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "sites" / "demo.yaml"


@pytest.fixture(scope="module")
def paired(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo site with oss01 and oss02 failover partners (same leaf module, as the
    inventory requires)."""
    text = DEMO.read_text()
    for me, other in (("oss01", "oss02"), ("oss02", "oss01")):
        i = text.index(f"  - name: {me}\n")
        j = text.index("    osts:", i)
        k = text.index("\n", j) + 1
        text = text[:k] + f"    failover: {other}\n" + text[k:]
    f = tmp_path_factory.mktemp("paired") / "demo.yaml"
    f.write_text(text)
    return f


@functools.cache
def _site(path: str) -> Site:
    site = load_site(path)[0]
    assert site is not None
    return site


@functools.cache
def _plan(path: str, strategy: str) -> Plan:
    return solve(_site(path), strategy)


@pytest.mark.parametrize("strategy", strategy_names())
def test_a_server_name_fails_the_server_and_no_router(strategy: str) -> None:
    down = resolve_down(_plan(str(DEMO), strategy), ["oss01"])
    assert down.routers == ()
    assert down.servers == ("oss01",) and down.named_servers == ("oss01",)


def test_projection_partner_carries_the_failed_servers_load(paired: Path) -> None:
    """Projection on the demo: oss02's net has one router, rtr02, carrying oss02's 4 flows.
    oss01 down moves its 4 OSTs to oss02, so rtr02 carries 8 (2.00x), nothing is lost and
    no router is down."""
    site = _site(str(paired))
    a = analyze(site, _plan(str(paired), "projection"), fail=("oss01",), throughput=None)
    assert a.failure is not None and a.failure.failed == ()
    ((s,),) = (a.failure.servers,)
    assert (s.name, s.carried_by, s.named) == ("oss01", "oss02", True)
    assert a.lost_writes == 0.0
    (load,) = a.failure_loads
    assert load.router == "rtr02" and load.flows == pytest.approx(8.0)
    assert load.normal == pytest.approx(4.0)


def test_server_without_partner_is_lost() -> None:
    a = analyze(_site(str(DEMO)), _plan(str(DEMO), "round-robin"), fail=("oss01",), throughput=None)
    assert a.failure is not None and a.failure.lost_servers == 1
    assert a.lost_writes == pytest.approx(4.0)


@pytest.mark.parametrize("strategy", ["projection", "round-robin", "baseline"])
def test_cli_fail_server_same_meaning_for_every_strategy(paired: Path, strategy: str) -> None:
    res = CliRunner().invoke(main, ["analyze", str(paired), "-s", strategy, "--fail", "oss01"])
    assert res.exit_code == 0, res.output
    assert "failure of 1 server(s): oss01\n" in res.output
    assert "moved    server oss01 (oss, 4 OSTs): failed; targets carried by oss02" in res.output
    res = CliRunner().invoke(main, ["analyze", str(DEMO), "-s", strategy, "--fail", "oss01"])
    assert res.exit_code == 1, res.output  # no partner: its 4 OSTs are lost
    assert "lost     server oss01 (oss, 4 OSTs): failed; targets lost" in res.output


def test_group_and_net_names_still_fail_routers() -> None:
    """The documented group / storage-net syntax keeps failing the priority-0 routers."""
    plan = _plan(str(DEMO), "groups")
    net = next(n for n in plan.storage_nets() if n.group == "core1/L01#1")
    down = resolve_down(plan, ["core1/L01#1"])
    assert down.routers == tuple(sorted(net.primary_routers)) and down.servers == ()
    assert resolve_down(_plan(str(DEMO), "projection"), ["o2ib101"]).routers == ("rtr02",)
