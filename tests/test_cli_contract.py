"""The command-line contract: every command x {ok, findings, usage error, input error} exits
0 / 1 / 2 as the README's table says, ``--format json`` output parses wherever it is offered
(also on errors), command-line mistakes are ``lnetgen: error[E-USAGE] --option: message`` and no
option value ends in a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import wolf_unrecorded
from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen.cli import main

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "sites" / "demo.yaml"
WOLF = ROOT / "sites" / "wolf.yaml"
SMALL = ROOT / "tests" / "cases" / "valid" / "torus-zyx" / "site.yaml"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A small valid site (projection), an invalid one, a plan of each and an output tree."""
    d = tmp_path_factory.mktemp("contract")
    text = SMALL.read_text(encoding="utf-8").replace("default: groups", "default: projection")
    (d / "site.yaml").write_text(text, encoding="utf-8")
    (d / "bad.yaml").write_text(text.replace("ip: 10.10.0.2,", "ip: 10.10.0.1,"), "utf-8")
    (d / "dir.yaml").mkdir()
    os.mkfifo(d / "fifo.yaml")
    (d / "notjson.json").write_text("{", encoding="utf-8")
    (d / "net.txt").write_text("site: x\n" * 40, encoding="utf-8")
    assert run(["solve", str(d / "site.yaml"), "--out", str(d / "plan.json")]).exit_code == 0
    assert run(["generate", str(d / "site.yaml"), "--out", str(d / "out")]).exit_code == 0
    # one router's dump with its routing switched off: verify must find it
    live = d / "live-broken"
    shutil.copytree(d / "out" / "lnetctl", live)
    for f in live.glob("*.yaml"):
        if "routing:" in f.read_text():
            f.write_text(f.read_text().replace("routing:\n    enable: 1\n", ""))
            break
    changed = text.replace("ip: 10.10.0.1,", "ip: 10.10.0.91,")
    (d / "changed.yaml").write_text(changed, encoding="utf-8")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def run(args: list[str]) -> Result:
    return CliRunner().invoke(main, args)


def no_traceback(r: Result) -> None:
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert "Traceback" not in r.output


# (name, args with {d} for the work directory, expected exit (None: 0, 1 or 2), JSON on stdout?)
CASES: list[tuple[str, list[str], int | None, bool]] = [
    # validate
    ("validate-ok", ["validate", "{d}/site.yaml"], 0, False),
    ("validate-ok-json", ["validate", "--format", "json", "{d}/site.yaml"], 0, True),
    ("validate-findings", ["validate", "--format", "json", "{d}/bad.yaml"], 1, True),
    ("validate-usage", ["validate", "--format", "xml", "{d}/site.yaml"], 2, False),
    ("validate-missing-json", ["validate", "--format", "json", "{d}/nosuch.yaml"], 2, True),
    ("validate-directory", ["validate", "{d}/dir.yaml"], 2, False),
    # a named pipe exited 1 (findings) after the loader refused it; nothing was validated
    ("validate-fifo", ["validate", "{d}/fifo.yaml"], 2, False),
    # schema, strategies
    ("schema-ok", ["schema", "--plan"], 0, False),
    ("schema-usage", ["schema", "--bogus"], 2, False),
    ("strategies-json", ["strategies", "--format", "json"], 0, True),
    ("strategies-usage", ["strategies", "--format", "xml"], 2, False),
    # solve
    ("solve-ok-json", ["solve", "{d}/site.yaml", "--format", "json"], 0, True),
    ("solve-findings", ["solve", "{d}/bad.yaml"], 1, False),
    ("solve-findings-json", ["solve", "{d}/bad.yaml", "--format", "json"], 1, True),
    ("solve-usage", ["solve", "{d}/site.yaml", "-s", "rr"], 2, False),
    ("solve-usage-json", ["solve", "{d}/site.yaml", "-s", "rr", "--format", "json"], 2, True),
    ("solve-input", ["solve", "{d}/dir.yaml"], 2, False),
    # generate
    (
        "generate-ok-json",
        ["generate", "{d}/site.yaml", "-o", "{d}/g1", "--format", "json"],
        0,
        True,
    ),
    (
        "generate-plan",
        ["generate", "{d}/site.yaml", "--plan", "{d}/plan.json", "-o", "{d}/g2"],
        0,
        False,
    ),
    ("generate-findings", ["generate", "{d}/bad.yaml", "-o", "{d}/g3"], 1, False),
    (
        "generate-usage",
        ["generate", "{d}/site.yaml", "--formats", "ansibel", "-o", "{d}/g4"],
        2,
        False,
    ),
    (
        "generate-input",
        ["generate", "{d}/site.yaml", "--plan", "{d}/notjson.json", "-o", "{d}/g5"],
        2,
        False,
    ),
    (
        "generate-stale",
        ["generate", "{d}/changed.yaml", "--plan", "{d}/plan.json", "-o", "{d}/g6"],
        2,
        False,
    ),
    (
        "generate-plan-and-strategy",
        ["generate", "{d}/site.yaml", "--plan", "{d}/plan.json", "-s", "baseline"],
        2,
        False,
    ),
    # diff
    ("diff-ok-json", ["diff", "{d}/site.yaml", "--live", "{d}/out", "--format", "json"], 0, True),
    (
        "diff-plan",
        ["diff", "{d}/site.yaml", "--plan", "{d}/plan.json", "--live", "{d}/out"],
        0,
        False,
    ),
    (
        "diff-findings-json",
        ["diff", "{d}/changed.yaml", "--live", "{d}/out", "--format", "json"],
        1,
        True,
    ),
    ("diff-invalid", ["diff", "{d}/bad.yaml", "--live", "{d}/out"], 1, False),
    ("diff-usage", ["diff", "{d}/site.yaml", "--live", "{d}/out", "--hosts", "rtr[01-"], 2, False),
    # a scope naming no host compared 0 hosts and said "live state equals the plan", exit 0
    (
        "diff-hosts-none",
        ["diff", "{d}/site.yaml", "--live", "{d}/out", "--hosts", "nope"],
        2,
        False,
    ),
    ("diff-input", ["diff", "{d}/site.yaml", "--live", "{d}/nosuch"], 2, False),
    (
        "diff-input-json",
        ["diff", "{d}/site.yaml", "--live", "{d}/nosuch", "--format", "json"],
        2,
        True,
    ),
    # verify
    ("verify-ok-json", ["verify", "{d}/out", "--format", "json"], 0, True),
    ("verify-usage", ["verify", "{d}/out", "--format", "xml"], 2, False),
    ("verify-input", ["verify", "{d}/nosuch"], 2, False),
    ("verify-input-json", ["verify", "{d}/dir.yaml", "--format", "json"], 2, True),
    ("verify-findings", ["verify", "{d}/out", "--live", "{d}/live-broken"], 1, False),
    # analyze
    ("analyze-ok-json", ["analyze", "{d}/site.yaml", "--format", "json"], 0, True),
    ("analyze-plan", ["analyze", "{d}/site.yaml", "--plan", "{d}/plan.json"], 0, False),
    ("analyze-findings", ["analyze", "{d}/site.yaml", "--fail", "rtr[01-04]"], 1, False),
    ("analyze-invalid", ["analyze", "{d}/bad.yaml"], 1, False),
    ("analyze-usage", ["analyze", "{d}/site.yaml", "-s", "rr"], 2, False),
    ("analyze-stale", ["analyze", "{d}/changed.yaml", "--plan", "{d}/plan.json"], 2, False),
    (
        "analyze-stale-forced",
        ["analyze", "{d}/changed.yaml", "--plan", "{d}/plan.json", "--force"],
        0,
        False,
    ),
    # compare
    (
        "compare-ok-json",
        ["compare", str(DEMO), "--format", "json", "--strategies", "projection"],
        0,
        True,
    ),
    ("compare-invalid", ["compare", "{d}/bad.yaml"], 1, False),
    ("compare-usage", ["compare", "{d}/site.yaml", "--seed", "-1"], 2, False),
    (
        "compare-usage-json",
        ["compare", "{d}/site.yaml", "--seed", "-1", "--format", "json"],
        2,
        True,
    ),
    ("compare-usage-strategies", ["compare", "{d}/site.yaml", "--strategies", "rr"], 2, False),
    # a missing older inventory exited 1, as if it had been read and found invalid
    (
        "compare-since-missing",
        ["compare", "{d}/site.yaml", "--since", "{d}/nosuch.yaml", "--workload", "none"],
        2,
        False,
    ),
    ("compare-since-invalid", ["compare", "{d}/site.yaml", "--since", "{d}/bad.yaml"], 1, False),
    # place
    (
        "place-clients-ok-json",
        [
            "place",
            "clients",
            "{d}/site.yaml",
            "--oss",
            "oss[01-02]",
            "--per-oss",
            "2",
            "--format",
            "json",
        ],
        0,
        True,
    ),
    (
        "place-clients-plan",
        [
            "place",
            "clients",
            "{d}/site.yaml",
            "--oss",
            "oss01,oss02",
            "--per-oss",
            "2",
            "--plan",
            "{d}/plan.json",
        ],
        0,
        False,
    ),
    ("place-clients-invalid", ["place", "clients", "{d}/bad.yaml", "--oss", "oss01"], 1, False),
    (
        "place-clients-usage",
        ["place", "clients", "{d}/site.yaml", "--oss", "oss01", "--seed", "-1"],
        2,
        False,
    ),
    ("place-clients-input", ["place", "clients", "{d}/site.yaml", "--oss", "nosuch"], 2, False),
    (
        "place-osts-ok-json",
        ["place", "osts", "{d}/site.yaml", "--client", "nid00001", "--format", "json"],
        0,
        True,
    ),
    ("place-osts-input", ["place", "osts", "{d}/site.yaml", "--client", "nosuch"], 2, False),
    (
        "place-osts-usage",
        ["place", "osts", "{d}/site.yaml", "--client", "nid00001", "--count", "0"],
        2,
        False,
    ),
    # report
    ("report-ok", ["report", "{d}/site.yaml", "--out", "{d}/r.html"], 0, False),
    ("report-invalid", ["report", "{d}/bad.yaml", "--out", "{d}/r2.html"], 1, False),
    ("report-usage", ["report", "{d}/site.yaml", "--max-slices", "-1"], 2, False),
    ("report-input", ["report", "{d}/nosuch.yaml"], 2, False),
    # verify (reads output trees, not plans)
    ("verify-json", ["verify", "{d}/out", "--format", "json"], None, True),
    ("verify-usage", ["verify", "{d}/out", "--format", "xml"], 2, False),
    ("verify-input-json", ["verify", "{d}/nosuch", "--format", "json"], 2, True),
    # collect (ClusterShell's exec worker in place of ssh)
    (
        "collect-ok",
        ["collect", "h[1-2]", "-o", "{d}/c1", "--exec", "--command", "echo net: #%h"],
        0,
        False,
    ),
    (
        "collect-findings",
        ["collect", "h[1-2]", "-o", "{d}/c2", "--exec", "--command", "false %h"],
        1,
        False,
    ),
    ("collect-usage", ["collect", "h[1-", "-o", "{d}/c3"], 2, False),
    (
        "collect-input",
        ["collect", "h1", "-o", "{d}/site.yaml", "--exec", "--command", "echo %h"],
        2,
        False,
    ),
    # fabric
    (
        "fabric-export-ok",
        ["fabric", "export", "{d}/site.yaml", "--out", "{d}/fabric.net"],
        0,
        False,
    ),
    ("fabric-export-invalid", ["fabric", "export", "{d}/bad.yaml"], 1, False),
    ("fabric-export-usage", ["fabric", "export", "{d}/site.yaml", "--fabric", "x"], 2, False),
    ("fabric-import-input", ["fabric", "import", "ibnetdiscover", "{d}/net.txt"], 2, False),
    ("fabric-import-usage", ["fabric", "import", "ibnetdump", "{d}/net.txt"], 2, False),
    (
        "fabric-plan-ports-ok-json",
        ["fabric", "plan-ports", "{d}/site.yaml", "--format", "json"],
        0,
        True,
    ),
    (
        "fabric-plan-ports-findings-json",
        ["fabric", "plan-ports", str(wolf_unrecorded()), "--format", "json"],
        1,
        True,
    ),
    ("fabric-plan-ports-invalid", ["fabric", "plan-ports", "{d}/bad.yaml"], 1, False),
    ("fabric-check-usage", ["fabric", "check", "{d}/site.yaml", "--format", "xml"], 2, False),
    ("fabric-check-invalid", ["fabric", "check", "{d}/bad.yaml"], 1, False),
    # advise
    ("advise-stripes-ok-json", ["advise", "stripes", "{d}/site.yaml", "--format", "json"], 0, True),
    ("advise-stripes-invalid", ["advise", "stripes", "{d}/bad.yaml"], 1, False),
    ("advise-stripes-usage", ["advise", "stripes", "{d}/site.yaml", "--fs", "nope"], 2, False),
    ("advise-routers-usage", ["advise", "routers", "{d}/site.yaml"], 2, False),
    ("advise-routers-invalid", ["advise", "routers", "{d}/bad.yaml"], 1, False),
    (
        "advise-routers-count",
        ["advise", "routers", "{d}/site.yaml", "--count", "0"],
        2,
        False,
    ),
]


@pytest.mark.parametrize(("name", "args", "code", "as_json"), CASES, ids=[c[0] for c in CASES])
def test_exit_code_and_json(
    name: str, args: list[str], code: int | None, as_json: bool, work: Path
) -> None:
    r = run([a.replace("{d}", str(work)) for a in args])
    no_traceback(r)
    if code is None:  # the outcome depends on work elsewhere; only the contract's form is fixed
        assert r.exit_code in (0, 1, 2), f"{name}: {r.output}"
    else:
        assert r.exit_code == code, f"{name}: {r.output}"
    if as_json:
        json.loads(r.stdout)
    if code == 2 and "error[E-USAGE]" in r.output:
        assert "<input>" not in r.output and "lnetgen: error[E-USAGE] " in r.output


def test_every_command_is_in_the_contract() -> None:
    """A new command must get its rows above."""
    import click

    def paths(cmd: click.Command, prefix: str) -> list[str]:
        if isinstance(cmd, click.Group):
            return [p for n, c in cmd.commands.items() for p in paths(c, f"{prefix} {n}".strip())]
        return [prefix]

    covered = {" ".join(a for a in c[1] if not a.startswith(("{", "-"))) for c in CASES}
    for path in paths(main, ""):
        assert any(c == path or c.startswith(path + " ") for c in covered), path


def test_usage_errors_name_the_option_not_a_file(work: Path) -> None:
    r = run(["generate", str(work / "site.yaml"), "--formats", "ansibel", "-o", str(work / "u")])
    assert r.exit_code == 2
    assert "lnetgen: error[E-USAGE] --formats: unknown ansibel (known: " in r.stderr
    r = run(["compare", str(work / "site.yaml"), "--seed", "-1"])
    assert "lnetgen: error[E-USAGE] --seed: -1 is not in the range" in r.stderr
    r = run(["validate", "--format", "json", str(work / "nosuch.yaml")])
    (d,) = json.loads(r.stdout)["diagnostics"]
    assert (d["code"], d["message"]) == ("E-FILE", "no such file")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # empty values ran as if the option had been left out
        (["analyze", "{s}", "--workload", "none", "--fail", ""], "--fail: '' names no node"),
        (["compare", "{s}", "--workload", "none", "--strategies", ""], "--strategies: '' is empty"),
        (
            ["report", "{s}", "-o", "{d}/r.html", "--compare", "--strategies", ","],
            "--strategies: ',' is",
        ),
        (["generate", "{s}", "-o", "{d}/e1", "--formats", ""], "--formats: '' is empty"),
        (["place", "clients", "{s}", "--oss", ""], "--oss: '' names no node"),
        (["place", "clients", "{s}", "--oss", "oss01", "--from", ""], "--from: '' is empty"),
        (["advise", "stripes", "{s}", "--job", ""], "--job: '' is empty"),
        # node-set mistakes that did not say which option held them
        (["advise", "stripes", "{s}", "--job", "bad["], "--job: 'bad[': missing bracket"),
        (["place", "clients", "{s}", "--oss", "oss01", "--from", "x[1-2]"], "--from: not clients"),
        (["place", "osts", "{s}", "--client", "zz["], "--client: 'zz[' is not a client"),
        # one node-set option is counted before it is expanded, in every command that has it
        (
            ["diff", "{s}", "--live", "{d}", "--hosts", "n[1-999999999]"],
            "--hosts: names more than 1,000,000 hosts",
        ),
        (["verify", "{d}", "--hosts", "n[1-999999999]"], "--hosts: names more than 1,000,000"),
        (["diff", "{s}", "--live", "{d}", "--hosts", "n[1-"], "--hosts: 'n[1-' is not a node"),
    ],
)
def test_empty_and_bad_values_name_their_option(args: list[str], said: str, work: Path) -> None:
    site = str(work / "site.yaml")
    r = run([a.replace("{s}", site).replace("{d}", str(work)) for a in args])
    no_traceback(r)
    assert r.exit_code == 2 and f"lnetgen: error[E-USAGE] {said}" in r.stderr, r.output


def test_analyze_and_place_do_not_say_nothing_written(work: Path) -> None:
    for args in (
        ["analyze", str(work / "bad.yaml")],
        ["place", "osts", str(work / "site.yaml"), "--client", "x"],
    ):
        r = run(args)
        assert r.exit_code in (1, 2) and "nothing written" not in r.output, r.output


# ----------------------------------------------------------------------------- any value

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=12)
_NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70).map(str), st.floats(allow_nan=True).map(str), _TEXT
)
_OPTIONS = [
    ("compare", "--seed"),
    ("place-clients", "--seed"),
    ("place-clients", "--per-oss"),
    ("place-clients", "--oss"),
    ("place-clients", "--from"),
    ("place-osts", "--count"),
    ("place-osts", "--client"),
    ("place-osts", "--fs"),
    ("analyze", "--fail"),
    ("analyze", "--link-mb-s"),
    ("analyze", "--weight-by"),
    ("solve", "--strategy"),
    ("generate", "--formats"),
    ("diff", "--hosts"),
    ("diff", "--host"),
    ("report", "--max-switches"),
]
_BASE = {
    "compare": ["compare", "{d}/site.yaml", "--strategies", "baseline", "--format", "json"],
    "place-clients": ["place", "clients", "{d}/site.yaml", "--format", "json"],
    "place-osts": ["place", "osts", "{d}/site.yaml", "--format", "json"],
    "analyze": ["analyze", "{d}/site.yaml", "--format", "json"],
    "solve": ["solve", "{d}/site.yaml", "--format", "json"],
    "generate": ["generate", "{d}/site.yaml", "-o", "{d}/any", "--format", "json"],
    "diff": ["diff", "{d}/site.yaml", "--live", "{d}/out/lnetctl/oss01.yaml", "--format", "json"],
    "report": ["report", "{d}/site.yaml", "--out", "{d}/any.html"],
}
_DEFAULTS = {"place-clients": ["--oss", "oss01"], "place-osts": ["--client", "nid00001"]}


@settings(max_examples=60)
@given(which=st.sampled_from(_OPTIONS), value=_NUMBERS)
def test_no_option_value_ends_in_a_traceback(
    which: tuple[str, str], value: str, work: Path
) -> None:
    cmd, option = which
    args = [a.replace("{d}", str(work)) for a in _BASE[cmd]]
    if option not in ("--oss", "--client"):
        args += _DEFAULTS.get(cmd, [])
    r = run([*args, option, value])
    no_traceback(r)
    assert r.exit_code in (0, 1, 2), r.output
    if "--format" in args and r.stdout.strip():
        json.loads(r.stdout)


def test_shell_completion_offers_commands_and_strategies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README documents click's completion; --strategy completes to the layouts."""
    monkeypatch.setenv("_LNETGEN_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "lnetgen solve x -s ne")
    monkeypatch.setenv("COMP_CWORD", "4")
    r = CliRunner().invoke(main, [], prog_name="lnetgen")
    assert r.exit_code == 0 and r.stdout.split() == ["plain,nearest-neighbor"]


# ----------------------------------------------------------------------------- stdout fails


def _lnetgen(args: list[str], stdout: int, stderr: int = subprocess.PIPE) -> tuple[int, str]:
    """Run the real command line (the stream checks are made on it only) with ``stdout``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-m", "lnetgen", *args],
        stdout=stdout,
        stderr=stderr,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    return proc.returncode, (proc.stderr or b"").decode()


_WRITERS = [
    ["schema"],
    ["strategies"],
    ["validate", str(DEMO)],
    ["solve", str(DEMO), "--format", "json"],
    ["validate", "--format", "json", str(ROOT / "nosuch.yaml")],  # the JSON of an error
]
_IDS = ["schema", "strategies", "validate", "solve-json", "validate-error-json"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", _WRITERS, ids=_IDS)
def test_a_full_stdout_is_one_line_and_exit_2(args: list[str]) -> None:
    """``lnetgen schema > /dev/full`` ended in an OSError traceback and exit 1 (a finding)."""
    with open("/dev/full", "wb") as full:
        code, err = _lnetgen(args, full.fileno())
    assert code == 2, err
    assert err.splitlines()[-1:] == [
        "lnetgen: error[E-OUTPUT] <stdout>: cannot write: No space left on device"
    ], err
    assert "Traceback" not in err and "Exception ignored" not in err, err


@pytest.mark.parametrize("args", _WRITERS[:3], ids=_IDS[:3])
def test_a_closed_pipe_exits_141_quietly(args: list[str]) -> None:
    """``lnetgen schema | head -c1`` exited 1, the code of a finding; now 141 (128 + SIGPIPE,
    what a process killed by it reports) without a word."""
    read, write = os.pipe()
    os.close(read)  # the reader has gone before anything is written
    try:
        code, err = _lnetgen(args, write)
    finally:
        os.close(write)
    assert (code, err) == (141, "")


def test_a_pipe_closed_in_the_middle_of_a_long_document_exits_141() -> None:
    """``solve --format json | head -c1``: the reader goes while a document longer than the
    pipe's buffer is written.  The interpreter lost the ``EPIPE`` of that one large write,
    which the pipe had taken in part: exit 0, the output silently cut."""
    cmd = [sys.executable, "-m", "lnetgen", "solve", str(ROOT / "sites" / "spider.yaml")]
    proc = subprocess.Popen(
        [*cmd, "--format", "json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(1) == b"{"  # 263 KB follow: the writer waits on the full pipe
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert (proc.wait(timeout=120), err) == (141, "")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_stderr_exits_without_a_traceback() -> None:
    """Nowhere left to report: the error of a missing SITE still exits 2, silently."""
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "lnetgen", "validate", str(ROOT / "nosuch.yaml")],
            stdout=subprocess.PIPE,
            stderr=full,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            cwd=ROOT,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 2 and proc.stdout == b""


# ----------------------------------------------------------------------------- a huge torus


@pytest.fixture(scope="module")
def huge_torus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo site in a 1000x1000x100 torus: 100,000,000 chips, 50 times the model's bound."""
    text = DEMO.read_text(encoding="utf-8")
    assert text.count("dims: [4, 4, 4]") == 1
    site = tmp_path_factory.mktemp("huge") / "demo.yaml"
    site.write_text(text.replace("dims: [4, 4, 4]", "dims: [1000, 1000, 100]"), encoding="utf-8")
    return site


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "{s}"],
        ["generate", "{s}", "-o", "{d}/out"],
        ["solve", "{s}"],
        ["analyze", "{s}"],
        ["compare", "{s}"],
        ["report", "{s}", "-o", "{d}/r.html"],
        ["place", "clients", "{s}", "--oss", "oss01"],
        ["place", "osts", "{s}", "--client", "nid00001"],
        ["advise", "stripes", "{s}"],
        ["fabric", "plan-ports", "{s}"],
    ],
    ids=lambda a: " ".join(a[: a.index("{s}")]),
)
def test_an_oversized_torus_is_an_invalid_inventory_in_every_command(
    args: list[str], huge_torus: Path
) -> None:
    """It passed validate and generate (exit 0) while analyze, report, compare and place
    refused it with E-TORUS-SIZE at no file location."""
    r = run(
        [a.replace("{s}", str(huge_torus)).replace("{d}", str(huge_torus.parent)) for a in args]
    )
    no_traceback(r)
    assert r.exit_code == 1, r.output
    where = f"{huge_torus}:30:3: error[E-TORUS-SIZE] $.topology.dims: a 1000x1000x100 torus"
    assert where in r.output, r.output
