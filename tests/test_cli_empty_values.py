"""An empty value is refused wherever a command takes a path or a string (README: "an empty
option value such as ``--formats ''`` is refused, not taken as 'not given'").

Every option and argument of every command whose type is a string, a path or a file is found
from click's command tree -- a new one is checked without being listed here -- and given ``''``:
the command must exit 2 with ``lnetgen: error[E-USAGE] <its name>:``.  ``solve --out ''``,
``fabric import --name ''``, ``advise stripes --path ''`` and others ran as if the option had
been left out (or wrote ``lfs setstripe`` lines naming no file); ``compare --since ''`` and
``report -o ''`` were refused without naming the option.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from lnetgen.cli import main

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "tests" / "cases" / "valid" / "torus-zyx" / "site.yaml"
IBNET = ROOT / "tests" / "fixtures" / "ibnetdiscover" / "leafspine.txt"

#: A valid command line of each command; ``{d}`` is the work directory.  An argument is
#: written ``{NAME}`` (its value follows in ``ARGUMENTS``) so that it can be replaced by ''.
BASE: dict[str, list[str]] = {
    "validate": ["{SITE}"],
    "schema": [],
    "strategies": [],
    "solve": ["{SITE}"],
    "generate": ["{SITE}", "-o", "{d}/gen"],
    "fabric import": ["ibnetdiscover", "{FILE}"],
    "fabric export": ["{SITE}"],
    "fabric plan-ports": ["{SITE}"],
    "fabric check": ["{SITE}"],
    "diff": ["{SITE}", "--live", "{d}/out/lnetctl"],
    "verify": ["{OUT_DIR}"],
    "analyze": ["{SITE}", "--workload", "none"],
    "place clients": ["{SITE}", "--oss", "oss01"],
    "place osts": ["{SITE}", "--client", "nid00001"],
    "compare": ["{SITE}", "--strategies", "baseline", "--workload", "none"],
    "report": ["{SITE}", "-o", "{d}/r.html"],
    # runs `true` on this machine for host h1 if an empty value is not refused
    "collect": [
        "{NODESET}",
        "--out",
        "{d}/coll",
        "--exec",
        "--timeout",
        "5",
        "--command",
        "true",
        "--modprobe-command",
        "true",
    ],
    "advise stripes": ["{SITE}"],
    "advise routers": ["{SITE}", "--workload", "none"],
}
ARGUMENTS = {
    "{SITE}": "{d}/site.yaml",
    "{FILE}": str(IBNET),
    "{OUT_DIR}": "{d}/out",
    "{NODESET}": "h1",
}

#: (command, option) for which an empty value means something, with the reason: none today
#: (an empty --fabric, --fs, --path, --name or --workload names nothing; a default is had by
#: leaving the option out).
MEANINGFUL: dict[tuple[str, str], str] = {}


def _commands(cmd: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
    if isinstance(cmd, click.Group):
        for name, sub in cmd.commands.items():
            yield from _commands(sub, f"{path} {name}".strip())
    else:
        yield path, cmd


def _takes_text(p: click.Parameter) -> bool:
    if isinstance(p, click.Option) and (p.is_flag or p.count):
        return False
    return isinstance(p.type, click.types.StringParamType | click.Path | click.File)


def _name(p: click.Parameter) -> str:
    """How a diagnostic names the parameter: its longest option, or the argument's name."""
    if isinstance(p, click.Option):
        return max(p.opts, key=len)
    return p.human_readable_name


def _params() -> list[pytest.param]:  # type: ignore[name-defined]
    out = []
    for path, cmd in _commands(main, ""):
        for p in cmd.params:
            if not _takes_text(p):
                continue
            name = _name(p)
            marks = []
            if (path, name) in MEANINGFUL:
                marks.append(pytest.mark.skip(reason=MEANINGFUL[(path, name)]))
            out.append(pytest.param(path, name, marks=marks, id=f"{path} {name}"))
    return out


PARAMS = _params()


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A small valid site, its output tree (verify's OUT_DIR, diff's dumps)."""
    d = tmp_path_factory.mktemp("empty")
    text = SMALL.read_text(encoding="utf-8").replace("default: groups", "default: projection")
    (d / "site.yaml").write_text(text, encoding="utf-8")
    r = CliRunner().invoke(main, ["generate", str(d / "site.yaml"), "--out", str(d / "out")])
    assert r.exit_code == 0, r.output
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_every_command_has_a_base_command_line() -> None:
    """A new command needs its row in BASE, so its options are checked too."""
    assert sorted({path for path, _cmd in _commands(main, "")}) == sorted(BASE)
    assert len(PARAMS) >= 60


@pytest.mark.parametrize(("path", "name"), PARAMS)
def test_an_empty_value_is_refused_naming_its_option(path: str, name: str, work: Path) -> None:
    base = BASE[path]
    if name.startswith("-"):
        args = [ARGUMENTS.get(a, a) for a in base] + [name, ""]
    else:
        assert f"{{{name}}}" in base, f"{path}: no placeholder for {name}"
        args = ["" if a == f"{{{name}}}" else ARGUMENTS.get(a, a) for a in base]
    args = [a.replace("{d}", str(work)) for a in args]
    r = CliRunner().invoke(main, [*path.split(), *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code == 2, r.output
    assert f"lnetgen: error[E-USAGE] {name}: " in r.stderr, r.output


def test_a_full_site_is_refused_naming_per_oss() -> None:
    """``place clients --per-oss 1000`` on the demo site said E-PLACE-FULL without naming the
    option whose value asked for more clients than the site has."""
    demo = str(ROOT / "sites" / "demo.yaml")
    r = CliRunner().invoke(main, ["place", "clients", demo, "--oss", "oss01", "--per-oss", "1000"])
    assert r.exit_code == 2, r.output
    assert "--per-oss" in r.stderr, r.output


def test_an_unknown_oss_is_named_by_its_option() -> None:
    """``place clients --oss nosuch`` said ``E-ANALYZE-SERVER no server 'nosuch' in the plan``,
    naming no option."""
    demo = str(ROOT / "sites" / "demo.yaml")
    r = CliRunner().invoke(main, ["place", "clients", demo, "--oss", "oss01,nosuch"])
    assert r.exit_code == 2, r.output
    assert "error[E-ANALYZE-SERVER] --oss: no server 'nosuch' in the plan" in r.stderr, r.output
