"""validate's I-STRATEGY notes are true: "also applies" exactly when the strategy solves.

Reviewers found validate say ``strategy round-robin also applies`` of a site on which ``lnetgen
solve -s round-robin`` then failed with seven E-GUARANTEE (the note tried the layout only).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from lnetgen import drysolve
from lnetgen.cli import main
from lnetgen.drysolve import APPLIES, dry_solve
from lnetgen.inventory import load_site
from lnetgen.solve import guarantee_error, solve
from lnetgen.strategies import REGISTRY, SolveError

CASES = Path(__file__).resolve().parent / "cases" / "valid"
CASE = CASES / "two-client-nets" / "site.yaml"
TCP_ON_L02 = 'client: {nid: "192.168.1.204@tcp", interface: eth0}'


def one_tcp_leaf(tmp_path: Path) -> Path:
    """The two-client-nets case, default baseline, its L02 router moved to gni: the tcp
    clients' only router is on L01 (the reviewers' ``awk3b.yaml`` in small)."""
    text = CASE.read_text()
    assert text.count(TCP_ON_L02) == 1 and text.count("default: projection") == 1
    text = text.replace(TCP_ON_L02, 'client: {nid: "204@gni", interface: ipogif0}')
    path = tmp_path / "site.yaml"
    path.write_text(text.replace("default: projection", "default: baseline"))
    return path


def solve_error_tail(n: int) -> str:
    """The solver's last E-GUARANTEE when it lists 20 of 20 + ``n`` failures."""
    return f"too many guarantee failures to list: {n} more"


def notes(path: Path) -> dict[str, str]:
    _site, diags = dry_solve(str(path))
    out = {}
    for d in diags:
        if d.code == APPLIES:
            m = re.match(r"strategy (\S+) ", d.message)
            assert m, d.message
            out[m[1]] = d.message
    return out


def test_leaf_local_strategies_do_not_apply_without_a_router_per_client_net(
    tmp_path: Path,
) -> None:
    site = one_tcp_leaf(tmp_path)
    res = CliRunner().invoke(main, ["validate", str(site)])
    assert res.exit_code == 0, res.output  # baseline, the default, solves
    got = notes(site)
    for name in ("projection", "round-robin", "nearest-neighbor"):
        assert got[name].startswith(f"strategy {name} does not apply: leaf core1/L02 "), got
        assert "client net tcp" in got[name]
        assert f"strategy {name} does not apply" in res.output


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_a_note_says_applies_exactly_when_the_strategy_solves(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(CASES / case)
    got = notes(Path("site.yaml"))
    site = load_site("site.yaml")[0]
    assert site is not None
    assert set(got) == set(REGISTRY) - {site.strategy.default}
    for name, message in got.items():
        try:
            solve(site, name)
        except SolveError as exc:
            assert "does not apply" in message, (name, message)
            assert exc.diagnostics[0].message in message
        else:
            assert message == f"strategy {name} also applies (--strategy {name})"


def test_the_count_of_more_problems_reads_the_solvers_tail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """20 guarantee failures are listed, then how many more: the note counts them, and names
    the first failure, not the count."""
    errs = [f"coverage: problem {i}" for i in range(27)]
    error = guarantee_error("f", errs)
    assert solve_error_tail(7) in [d.message for d in error.diagnostics]

    def failing(_site: object, _name: str) -> None:
        raise error

    site = load_site(str(CASE))[0]
    assert site is not None
    monkeypatch.setattr(drysolve, "solve", failing)
    note = drysolve._applies(site, "round-robin")
    assert note.startswith("strategy round-robin does not apply: coverage: problem 0 (and 26 ")
