"""No control character reaches the terminal, whatever a live dump, an inventory or a workload
file holds: each route by which such a value comes back in text (``diff`` and its
``--plan-changes``, a diagnostic's document path, a collected host's error output) is fed
hostile strings, and stdout and stderr are searched for any character of ``CONTROL`` (that of
test_planfile_hostile.py).  The values show escaped (``\\x1b``, ``\\u202e``); JSON keeps them
as they are.  A command of ``--plan-changes`` built from such a value is not given to run, and
one built from a printable but odd value (``x; touch F``) passes it as one argument.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import ROOT, demo_next_pairing

from lnetgen.cli import main

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
FIX = ROOT / "tests" / "fixtures" / "live" / "demo"
#: OSC (a window title) ended by BEL, CSI, CR, BS, DEL, C1 (NEL, CSI), bidi marks and overrides
HOSTILE = (
    "ipo\x1b]0;pwned\x07gif0",
    "ipo\x1b[2Jgif0\r\x08\x7f",
    "ipo\x85gif0\x9b31m",
    "ipo\u202egif0\u2066\u2069\u200f",
)
# each as a double-quoted YAML scalar (PyYAML refuses raw control characters in a document)
QUOTED = {
    "ipo\x1b]0;pwned\x07gif0": '"ipo\\e]0;pwned\\agif0"',
    "ipo\x1b[2Jgif0\r\x08\x7f": '"ipo\\e[2Jgif0\\r\\b\\x7f"',
    "ipo\x85gif0\x9b31m": '"ipo\\Ngif0\\x9b31m"',
    "ipo\u202egif0\u2066\u2069\u200f": '"ipo\\u202egif0\\u2066\\u2069\\u200f"',
}


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def clean(r: Result) -> None:
    """Nothing of ``CONTROL`` on stdout or stderr, and no traceback."""
    for stream in (r.stdout, r.stderr):
        found = CONTROL.search(stream)
        assert found is None, (found, stream)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception


def live_dir(tmp_path: Path, iface: str, udsp_dst: str = "") -> Path:
    """rtr01's dump with ``iface`` for its gni interface (raw in the text: the live reader
    takes it), and nid00001's with a UDSP rule to ``udsp_dst`` the plan does not have."""
    live = tmp_path / "live"
    live.mkdir()
    text = (FIX / "rtr01.yaml").read_text(encoding="utf-8")
    assert text.count("0: ipogif0") == 1
    (live / "rtr01.yaml").write_text(text.replace("0: ipogif0", f"0: {iface}"), encoding="utf-8")
    client = (FIX / "nid00001.yaml").read_text(encoding="utf-8")
    if udsp_dst:
        client += (
            f"udsp:\n    - idx: 0\n      src: \n      dst: {udsp_dst}\n"
            "      rte: 10.10.0.[1-2]@o2ib100\n      action:\n          priority: 0\n"
        )
    (live / "nid00001.yaml").write_text(client, encoding="utf-8")
    return live


def diff(live: Path, *extra: str) -> Result:
    return run(
        "diff", str(demo_next_pairing()), "--live", str(live), "--hosts", "rtr01,nid00001", *extra
    )


@pytest.mark.parametrize("raw", [False, True], ids=["quoted", "raw"])
@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_diff_and_its_steps_escape_live_values(tmp_path: Path, value: str, raw: bool) -> None:
    written = value if raw else QUOTED[value]
    r = diff(live_dir(tmp_path, written, written), "--plan-changes")
    assert r.exit_code == 1, r.output
    clean(r)
    shown = repr(value)[1:-1]
    assert f"~ net gni interfaces {shown} -> ipogif0" in r.stdout
    assert f"- udsp --dst {shown} --rte 10.10.0.[1-2]@o2ib100 --priority 0 (idx 0)" in r.stdout
    # the command that would remove that interface is shown, escaped, and not given to run
    refused = [line for line in r.stdout.splitlines() if shown in line and "net del" in line]
    assert refused == [
        "# refused: a value of the live dump here holds characters that do not print: "
        f"lnetctl net del --net gni --if '{shown}'"
    ]
    assert "clush -w rtr01 'lnetctl set routing 0'" in r.stdout  # the rest is planned


def test_json_keeps_the_value_and_runs_nothing_built_from_it(tmp_path: Path) -> None:
    value = HOSTILE[0]
    r = diff(live_dir(tmp_path, QUOTED[value]), "--plan-changes", "--format", "json")
    assert r.exit_code == 1, r.output
    clean(r)
    doc = json.loads(r.stdout)
    (group,) = [g for g in doc["groups"] if g["hosts"] == "rtr01"]
    assert group["change_nets"] == [{"net": "gni", "live": [value], "proposed": ["ipogif0"]}]
    runnable = [c for s in doc["steps"] for c in s["clush"]]
    assert runnable and not any("pwned" in c for c in runnable)
    commands = [c for s in doc["steps"] for c in s["commands"] if "pwned" in c]
    assert len(commands) == 1 and commands[0].startswith("# refused: ")


def test_a_printable_odd_value_stays_one_argument(tmp_path: Path) -> None:
    """``x; touch F`` is printable: its command is given, ``x; touch F`` one argument of
    lnetctl however the clush line is run (here by a stand-in clush and lnetctl)."""
    pwned = tmp_path / "pwned"
    value = f"x; touch {pwned} $(touch {pwned})"
    r = diff(live_dir(tmp_path, json.dumps(value)), "--plan-changes")
    assert r.exit_code == 1, r.output
    (line,) = [x for x in r.stdout.splitlines() if "net del --net gni" in x]
    assert line.startswith("clush -w rtr01 ")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (("clush", 'shift 2; exec sh -c "$1"'), ("lnetctl", 'printf "%s\\n" "$@"')):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        (bin_dir / name).chmod(stat.S_IRWXU)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run(["sh", "-c", line], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["net", "del", "--net", "gni", "--if", value]
    assert not pwned.exists()
    assert shlex.split(shlex.split(line)[3])[-1] == value


KEY = "foo\x1b]0;pwned\x07\u202eevil\r\x85\x9b2J"
KEY_YAML = '"foo\\e]0;pwned\\a\\u202eevil\\r\\N\\x9b2J"'


def test_an_unknown_inventory_key_shows_escaped(tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    text = demo_next_pairing().read_text(encoding="utf-8")
    site.write_text(f"{KEY_YAML}: 1\n{text}", encoding="utf-8")
    r = run("validate", str(site))
    assert r.exit_code == 1, r.output
    clean(r)
    assert f"[E-SCHEMA-KEY] $.{repr(KEY)[1:-1]}: unknown key" in r.output
    r = run("validate", str(site), "--format", "json")
    assert r.exit_code == 1
    clean(r)
    (d,) = [d for d in json.loads(r.stdout)["diagnostics"] if d["code"] == "E-SCHEMA-KEY"]
    assert d["path"] == f"$.{KEY}"  # the key itself, escaped by JSON


def test_an_unknown_workload_key_shows_escaped(tmp_path: Path) -> None:
    workload = tmp_path / "w.yaml"
    workload.write_text(f"pattern: file-per-process\n{KEY_YAML}: 1\n", encoding="utf-8")
    r = run("analyze", str(demo_next_pairing()), "--workload", str(workload))
    assert r.exit_code == 2, r.output
    clean(r)
    assert f"w.yaml:2:1: error[E-WORKLOAD] $.{repr(KEY)[1:-1]}: unknown key" in r.stderr


def test_a_hosts_error_output_shows_escaped(tmp_path: Path) -> None:
    command = "printf 'lnetctl: \\033]0;pwned\\007 \\342\\200\\256 bad\\r\\n' >&2; exit 3"
    r = run("collect", "h1", "--out", str(tmp_path / "o"), "--exec", "--command", command)
    assert r.exit_code == 1, r.output
    clean(r)
    # the reason is escaped (no control character reaches the terminal), not quoted whole
    assert "lnetgen: h1: exit status 3: lnetctl: \\x1b]0;pwned\\x07 \\u202e bad\n" in r.stderr
