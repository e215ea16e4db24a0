"""Progress on stderr for long commands: the library ticks, only the CLI draws."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from lnetgen.api import generate, verify, write_output
from lnetgen.cli import main
from lnetgen.cli.common import progress_bars
from lnetgen.progress import NO_PROGRESS, Tick

DEMO = str(ROOT / "sites" / "demo.yaml")


class Recorder:
    """A Progress that counts the stages and ticks it is given."""

    def __init__(self) -> None:
        self.totals: dict[str, int] = {}
        self.ticks: Counter[str] = Counter()

    def __call__(self, what: str, total: int) -> Tick:
        self.totals[what] = total

        def tick() -> None:
            self.ticks[what] += 1

        return tick


def test_generate_and_verify_tick_once_per_step(tmp_path: Path) -> None:
    gen = generate(DEMO, None, "lnetctl")
    rec = Recorder()
    write_output(gen, str(tmp_path / "out"), progress=rec)
    # files are rendered as they are written: the count is not known ahead (total 0)
    assert rec.totals == {"writing": 0}
    assert dict(rec.ticks) == {"writing": len(gen.records)} and len(gen.records) > 30
    rec = Recorder()
    res = verify(str(tmp_path / "out"), progress=rec)
    assert not res.errors
    assert rec.totals["reading"] == rec.ticks["reading"] > 0
    proving = {k: v for k, v in rec.totals.items() if k.startswith("proving ")}
    assert proving == {"proving home": 1, "proving scratch": 1}
    assert all(rec.ticks[k] == v for k, v in proving.items())


def test_compare_ticks_per_strategy() -> None:
    from lnetgen.analyze import compare
    from lnetgen.inventory import load_site

    site, _ = load_site(DEMO)
    rec = Recorder()
    compare(site, ["groups", "baseline"], progress=rec)
    assert rec.totals == {"strategies": 2} and rec.ticks["strategies"] == 2


def test_no_bar_when_quiet_or_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    assert progress_bars(True) is NO_PROGRESS
    monkeypatch.setattr("sys.stderr", io.StringIO())  # not a terminal
    assert progress_bars(False) is NO_PROGRESS


def test_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    start = progress_bars(False)
    assert start is not NO_PROGRESS
    tick = start("writing", 3)
    for _ in range(3):
        tick()  # the bar appears after 2 s only, and closes itself at the total


def test_cli_output_is_unchanged_by_quiet(tmp_path: Path) -> None:
    """stdout is the same with and without --quiet (bars only ever go to stderr)."""
    runner = CliRunner()
    a = runner.invoke(main, ["generate", DEMO, "--out", str(tmp_path / "a"), "--quiet"])
    b = runner.invoke(main, ["generate", DEMO, "--out", str(tmp_path / "b")])
    assert a.exit_code == b.exit_code == 0
    assert a.output.replace(str(tmp_path / "a"), "X") == b.output.replace(str(tmp_path / "b"), "X")
    r = runner.invoke(main, ["verify", str(tmp_path / "a"), "-q"])
    assert r.exit_code == 0, r.output


def test_analyze_report_and_diff_tick(tmp_path: Path) -> None:
    """analyze ticks its six stages, a report each strategy, diff each host's dumps."""
    from lnetgen.analyze import Settings, analyze
    from lnetgen.api import solve_site
    from lnetgen.live import read_live
    from lnetgen.report.solved import solve_all

    site, plan, _ = solve_site(DEMO, "groups")
    rec = Recorder()
    analyze(site, plan, progress=rec)
    assert rec.totals == {"analyzing": 6} and rec.ticks["analyzing"] == 6
    rec = Recorder()
    solve_all(site, ["groups", "baseline", "projection"], Settings(), rec)
    assert rec.totals == {"strategies": 3} and rec.ticks["strategies"] == 3
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    for host, text in (("rtr01", "net:\n"), ("rtr02", "net:\n")):
        (dumps / f"{host}.yaml").write_text(text, encoding="utf-8")
    rec = Recorder()
    read_live(str(dumps), progress=rec)
    assert rec.totals == {"reading dumps": 2} and rec.ticks["reading dumps"] == 2


@pytest.mark.parametrize(
    "args",
    [
        ["analyze", DEMO, "-q"],
        ["report", DEMO, "-q", "--out", "{tmp}/r.html"],
        ["diff", DEMO, "--live", "{tmp}", "-q"],
        ["fabric", "check", DEMO, "-q", "--format", "json"],
    ],
)
def test_long_commands_take_quiet(args: list[str], tmp_path: Path) -> None:
    """--quiet/-q is accepted by every command that can run past 2 s (exit is never 2)."""
    (tmp_path / "rtr01.yaml").write_text("net:\n", encoding="utf-8")
    r = CliRunner().invoke(main, [a.format(tmp=tmp_path) for a in args])
    assert r.exit_code in (0, 1), r.output
