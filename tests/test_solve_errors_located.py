"""A solver error of any strategy is located in the inventory and names its cause.

Reviewers found ``lnetgen solve SITE -s round-robin`` on a site whose tcp login net has one
router, on leaf L01 only, print seven ``error[E-GUARANTEE] $: coverage: class clients-tcp has no
priority-0 route to o2ib2`` lines: no line or column, and no word of the cause (the other
leaves have no router on tcp).  The solver now names the leaf and the client net
(E-LEAF-NO-ROUTER) before it builds the plan, and every command locates it at the leaf's first
server, as validate locates the inventory's E-LEAF-NO-ROUTER.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from lnetgen.cli import main
from lnetgen.diagnostics import Diagnostic
from lnetgen.drysolve import dry_solve, locate
from lnetgen.gateways import gateway_problems
from lnetgen.inventory import check_source
from lnetgen.solve import solve
from lnetgen.strategies import NetSpec, SolveError
from lnetgen.yamlsrc import load_file

CASE = Path(__file__).resolve().parent / "cases" / "valid" / "two-client-nets" / "site.yaml"
TCP_ON_L02 = 'client: {nid: "192.168.1.204@tcp", interface: eth0}'


def one_tcp_leaf(tmp_path: Path, default: str = "baseline") -> Path:
    """The two-client-nets case with its L02 router moved to gni: the tcp clients' only router
    is on L01 (the reviewers' ``awk3b.yaml`` in small)."""
    text = CASE.read_text()
    assert text.count(TCP_ON_L02) == 1 and text.count("default: projection") == 1
    text = text.replace(TCP_ON_L02, 'client: {nid: "204@gni", interface: ipogif0}')
    path = tmp_path / "site.yaml"
    path.write_text(text.replace("default: projection", f"default: {default}"))
    return path


def first_server_on_l02(path: Path) -> int:
    """The line of ``attach`` of oss03, the first server the inventory cables to core1/L02."""
    lines = path.read_text().splitlines()
    start = lines.index("  - name: oss03")
    return next(i for i in range(start, len(lines)) if "attach:" in lines[i]) + 1


@pytest.mark.parametrize("strategy", ["round-robin", "nearest-neighbor", "projection"])
def test_solve_nondefault_strategy_error_is_located_and_named(
    tmp_path: Path, strategy: str
) -> None:
    site = one_tcp_leaf(tmp_path)
    res = CliRunner().invoke(main, ["solve", str(site), "--strategy", strategy])
    assert res.exit_code == 1, res.output
    errs = [ln for ln in res.output.splitlines() if "error[" in ln and ln.startswith(str(site))]
    assert errs, res.output
    line = first_server_on_l02(site)
    assert all(re.match(rf"{re.escape(str(site))}:\d+:\d+: ", ln) for ln in errs), errs
    assert not [ln for ln in errs if " $: " in ln], errs
    (err,) = errs
    assert err.startswith(f"{site}:{line}:") and "error[E-LEAF-NO-ROUTER]" in err, err
    assert "$.servers[2].attach" in err
    assert "leaf core1/L02" in err and "client net tcp" in err, err
    assert "E-GUARANTEE" not in res.output


def test_validate_default_strategy_names_leaf_and_client_net(tmp_path: Path) -> None:
    site = one_tcp_leaf(tmp_path, default="projection")
    _solved, diags = dry_solve(str(site))
    errs = [d for d in diags if d.severity == "error"]
    assert [(d.code, d.path, d.line) for d in errs] == [
        ("E-LEAF-NO-ROUTER", "$.servers[2].attach", first_server_on_l02(site))
    ], [d.format() for d in errs]
    assert "leaf core1/L02" in errs[0].message and "client net tcp" in errs[0].message


def test_baseline_routes_across_leaves(tmp_path: Path) -> None:
    """Baseline gives every router of the fabric every server: one tcp router is enough."""
    site, diags = check_source(load_file(str(one_tcp_leaf(tmp_path))))
    assert site is not None, diags
    assert solve(site, "baseline").strategy == "baseline"
    with pytest.raises(SolveError):
        solve(site, "round-robin")


def test_group_without_router_on_a_client_net_names_the_group() -> None:
    """A leaf with a tcp router whose N:M group got none: the group is named, and the router
    that serves other groups; a fabric-wide net without a router on tcp names the fabric."""
    src = load_file(str(CASE))
    site, diags = check_source(src)
    assert site is not None, diags
    by = {r.name: r for r in site.routers}
    oss01 = [s for s in site.servers if s.name == "oss01"]
    leaf = NetSpec(oss01, [by["rtr01"]], ("core1", "L01"), group="core1/L01#1")
    fabric = NetSpec(oss01, [by["rtr01"], by["rtr03"]], None, group="all")
    got = gateway_problems(site, "groups", [leaf, fabric], ["o2ib1", "o2ib2"])
    assert [d.code for d in got] == ["E-LEAF-NO-ROUTER", "E-GUARANTEE"]
    assert got[0].message.startswith("group core1/L01#1 of leaf core1/L01 holds servers")
    assert "client net tcp" in got[0].message and "rtr02" in got[0].message
    assert got[1].message.startswith("coverage: fabric storage-ib has no router on client net tcp")
    located = [locate(src, site, d) for d in got]
    assert [d.path for d in located] == ["$.servers[0].attach", "$.fabrics[0]"]
    assert all(d.line for d in located)


def test_a_class_message_is_located_at_its_clients() -> None:
    """What names only a client class is put at the clients on its net, not the strategy."""
    src = load_file(str(CASE))
    site, _ = check_source(src)
    assert site is not None
    d = Diagnostic(
        site.file, 0, 0, "error", "E-GUARANTEE", "$", "coverage: class clients-tcp has no route"
    )
    got = locate(src, site, d)
    assert got.path == "$.clients[1]" and got.line
