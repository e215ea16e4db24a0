"""``lnetgen fabric import ibnetdiscover`` on hostile input: what production captures look like
when they are truncated, concatenated, edited by hand or not ibnetdiscover output at all.

Regression tests for: a port number or count of 4,300+ digits ending in a ValueError traceback;
32 MB of bad lines after a node line using 4.8 GB and 134 s (every diagnostic was kept); a
fabric with no leaf (only CAs, only switches, 65,535 unconnected switches, one switch described
twice) exiting 0 with ``switches: []``, which no inventory takes; port counts of 0 or 255, ports
0, 255 or past the node's count, a port listed twice or cabled to its own node, a node
described twice (two captures in one file) and GUIDs over 64 bits read without a word; a
``switchguid=`` line and the node id naming different GUIDs, a node id in upper case or short,
all reported as peers "the output does not describe"; link errors without a line number; a CA
port cabled to a router or another CA (ibnetdiscover writes `` (guid) `` after the peer) and
``ibnetdiscover -g`` chassis lines refused as unreadable; a form feed or U+2028 in a node
description taken for a line break (line numbers off); a leaf or spine description with 4,300+
digits ending in a traceback; bidi characters of a description, and a file name holding a line
break, written raw into the YAML and on the terminal; parse errors of standard input located
at ``-`` instead of ``<stdin>``; and a quadratic scan making 10,000 leaf/spine pairs take 40 s.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import ROOT

from lnetgen.cli import main
from lnetgen.diagnostics import InputError
from lnetgen.fabric import infer_fabric, parse_ibnetdiscover
from lnetgen.fabric.ibnetdiscover import MAX_IBNET_DIAGS

FIXTURES = ROOT / "tests" / "fixtures" / "ibnetdiscover"
SW = 0x10
CA = 0x100


def _switch(guid: int, desc: str, links: list[str], ports: int | str = 36) -> list[str]:
    return [
        "",
        "vendid=0x2c9",
        f"switchguid=0x{guid:x}({guid:x})",
        f'Switch\t{ports} "S-{guid:016x}"\t\t# "{desc}" enhanced port 0 lid 1 lmc 0',
        *links,
    ]


def _ca(guid: int, desc: str, links: list[str], ports: int = 1) -> list[str]:
    return ["", f"caguid=0x{guid:x}", f'Ca\t{ports} "H-{guid:016x}"\t\t# "{desc}"', *links]


def _sw_port(port: int | str, peer: str, peer_port: int | str, pguid: int = 0) -> str:
    pg = f"({pguid:x}) " if pguid else ""
    return f'[{port}]\t"{peer}"[{peer_port}]{pg}\t\t# "x" lid 2 4xEDR'


def _ca_port(port: int, guid: int, peer: str, peer_port: int, peer_guid: int = 0) -> str:
    pg = f" ({peer_guid:x}) " if peer_guid else ""
    return f'[{port}]({guid + port:x}) \t"{peer}"[{peer_port}]{pg}\t\t# lid 5 lmc 0 "x" lid 1 4xEDR'


def small(sw_desc: str = "leaf1", ca_desc: str = "node01 HCA-1") -> str:
    """One switch with one host: lines 1-5 the switch, 6 its port, 8-10 the CA and its port."""
    lines = [
        "# Topology file",
        *_switch(SW, sw_desc, [_sw_port(1, f"H-{CA:016x}", 1, CA + 1)]),
        *_ca(CA, ca_desc, [_ca_port(1, CA, f"S-{SW:016x}", 1)]),
    ]
    return "\n".join(lines) + "\n"


def _errors(text: str) -> list[tuple[int, str, str]]:
    with pytest.raises(InputError) as exc:
        parse_ibnetdiscover(text, "f")
    return [(d.line, d.code, d.message) for d in exc.value.diagnostics]


def _import(
    tmp_path: Path, text: str | bytes, *args: str, name: str = "fabric.txt"
) -> tuple[int, str, str, Path]:
    path = tmp_path / name
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    r = CliRunner().invoke(main, ["fabric", "import", "ibnetdiscover", str(path), *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert "Traceback" not in r.output
    return r.exit_code, r.stdout, r.stderr, path


# ----------------------------------------------------------------------------- no traceback


@pytest.mark.parametrize(
    "edit",
    [
        ('[1]\t"H-', "[" + "1" * 5000 + ']\t"H-'),  # port number
        (f'"H-{CA:016x}"[1]', f'"H-{CA:016x}"[' + "1" * 5000 + "]"),  # peer port number
        ("Switch\t36", "Switch\t" + "9" * 5000),  # port count
    ],
    ids=["port", "peer-port", "port-count"],
)
def test_numbers_of_thousands_of_digits_are_located_errors(
    tmp_path: Path, edit: tuple[str, str]
) -> None:
    """``int()`` of 4,300 or more decimal digits raises ValueError: it was a traceback, exit 1."""
    code, _out, err, path = _import(tmp_path, small().replace(*edit, 1))
    assert code == 2
    assert f"{path}:" in err and "error[E-IBNET]" in err
    assert "1111111111111111111111111" not in err  # the number is shown cut


@pytest.mark.parametrize("which", ["spine", "leaf"])
def test_descriptions_with_thousands_of_digits(which: str) -> None:
    """Chips are ordered by the number in their description: ``int()`` of it raised."""
    text = (FIXTURES / "leafspine.txt").read_text()
    old = "MF0;spine01:MSB7800/U1" if which == "spine" else "MF0;leaf01:MSB7700/U1"
    net = parse_ibnetdiscover(text.replace(old, which + "1" * 5000))
    imp = infer_fabric(net, "x")
    assert len(imp.fabric["switches"]) == 1


# ----------------------------------------------------------------------------- bounded memory


def _cap() -> None:
    limit = 1 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_many_bad_lines_after_a_node_line_stay_bounded(tmp_path: Path) -> None:
    """32 MB of unreadable lines after a node line: every diagnostic was kept (4.8 GB, 134 s);
    now reading stops after the first 20, under a 1 GiB address space limit, in seconds."""
    path = tmp_path / "bad.txt"
    with open(path, "w") as fh:
        fh.write(small())
        fh.write("g\n" * (15 << 20))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "lnetgen", "fabric", "import", "ibnetdiscover", str(path)],
        env=env,
        preexec_fn=_cap,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    assert f"{path}:11:1: error[E-IBNET]" in proc.stderr
    assert f"{path}:31:1: error[E-IBNET] $: ... and more: reading stopped at line 31" in proc.stderr
    assert time.monotonic() - start < 20


def test_parser_keeps_at_most_the_reported_diagnostics() -> None:
    diags = _errors(small() + "garbage\n" * 1000)
    assert len(diags) == MAX_IBNET_DIAGS + 1
    assert diags[-1][:2] == (11 + MAX_IBNET_DIAGS, "E-IBNET")
    assert diags[-1][2].startswith("... and more: reading stopped at line 31")


# ----------------------------------------------------------------------------- no leaf


def _many_switches(n: int) -> str:
    parts = ["# Topology file"]
    for i in range(n):
        g = 0x1000 + i
        parts.append(f'\nswitchguid=0x{g:x}\nSwitch\t36 "S-{g:016x}"\t\t# "sw{i}" base port 0')
    return "\n".join(parts) + "\n"


@pytest.mark.parametrize(
    "text",
    [
        "\n".join(_ca(CA, "n", [])) + "\n",
        "\n".join(_switch(SW, "leaf1", [])) + "\n",
        _many_switches(65535),
    ],
    ids=["ca-only", "switch-only", "65535-switches"],
)
def test_fabric_without_a_leaf_is_refused(tmp_path: Path, text: str) -> None:
    """These exited 0 with ``switches: []``: no inventory takes a fabric without a switch."""
    code, out, err, path = _import(tmp_path, text)
    assert code == 2 and out == ""
    assert f"{path}: error[E-IBNET-EMPTY]" in err and "no switch has a host" in err


# ----------------------------------------------------------------------------- bad values


def _one_switch(links: list[str], ports: int | str = 36) -> str:
    return "\n".join(["#", *_switch(SW, "leaf1", links, ports)]) + "\n"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (small().replace("Switch\t36", "Switch\t0"), 5, "has 0 ports"),
        (small().replace("Switch\t36", "Switch\t255"), 5, "has 255 ports"),
        (small().replace('[1]\t"H-', '[0]\t"H-'), 6, "port 0 of S-"),
        (small().replace('[1]\t"H-', '[40]\t"H-'), 6, "port 40 of S-"),
        (small().replace('"H-0000000000000100"[1]', '"H-0000000000000100"[255]'), 6, "port 255"),
        (_one_switch([_sw_port(1, f"S-{SW:016x}", 1)]), 6, "cabled to its own node"),
        (_one_switch([_sw_port(1, f"S-{SW:016x}", 2)]), 6, "cabled to its own node"),
        (
            small().replace(
                '[1]\t"H-', f'[1]\t"H-{CA:016x}"[1]({CA + 1:x}) \t\t# "x" lid 2 4xEDR\n[1]\t"H-'
            ),
            7,
            "port 1 of S-0000000000000010 is listed twice (first on line 6)",
        ),
        (small().replace("switchguid=0x10(10)", "switchguid=0x1" + "0" * 16), 4, "64 bits"),
        (small().replace("[1](101)", "[1](" + "f" * 20 + ")"), 10, "64 bits"),
        (small().replace("Switch\t36", "sysimgguid=0x" + "f" * 40 + "\nSwitch\t36"), 5, "64 bits"),
        (small().replace("switchguid=0x10(10)", "switchguid=0x11(11)"), 5, "different GUIDs"),
        (small().replace('Switch\t36 "S-', 'Switch\t36 "H-'), 5, "a switch's id is S-<guid>"),
        (small().replace("Switch\t36", "Switch\t３６"), 5, "cannot read this line"),
    ],
    ids=[
        "0-ports",
        "255-ports",
        "port-0",
        "port-past-count",
        "peer-port-255",
        "same-port",
        "loop-cable",
        "port-twice",
        "guid-65-bits",
        "port-guid-80-bits",
        "sysimg-160-bits",
        "guid-line-vs-id",
        "kind-vs-id",
        "fullwidth-digits",
    ],
)
def test_impossible_values_are_located(text: str, line: int, words: str) -> None:
    """Each was read without a word (and gave an inventory that does not validate, or
    dropped a cable), or reported as a peer "the output does not describe" without a line."""
    errs = _errors(text)
    assert any(ln == line and words in msg for ln, _code, msg in errs), errs


def test_two_captures_in_one_file_are_refused() -> None:
    """Concatenated captures doubled every host (40 host ports from a fabric of 20)."""
    text = (FIXTURES / "demo-core2.txt").read_text()
    errs = _errors(text + text)
    first = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("Switch"))
    n = len(text.splitlines())
    assert errs[0][0] == n + first and f"(first on line {first})" in errs[0][2]
    assert "described twice" in errs[0][2]


def test_node_ids_in_other_spellings_name_the_same_node() -> None:
    """``S-10`` or ``H-0000000000000ABC`` on a port line is the node of ``switchguid=0x10`` or
    ``caguid=0xabc``: both were peers "the output does not describe"."""
    short = small().replace(f'"S-{SW:016x}"[1]', '"S-10"[1]')
    upper = small().replace("caguid=0x100", "caguid=0xabc")
    upper = upper.replace(f"H-{CA:016x}", "H-0000000000000ABC")
    for text in (short, upper):
        imp = infer_fabric(parse_ibnetdiscover(text), "x")
        assert [(h.name, h.port) for h in imp.hosts] == [("node01", 1)]


# ----------------------------------------------------------------------------- located links


def test_link_errors_name_the_port_line() -> None:
    """E-IBNET-LINK had no line: in a truncated 300-line capture, nothing to go to."""
    text = (FIXTURES / "demo-core2.txt").read_text()
    cut = text[: len(text) // 3]
    cut = cut[: cut.rfind("\n") + 1]
    errs = _errors(cut)
    assert errs and all(code == "E-IBNET-LINK" and ln > 0 for ln, code, _m in errs)
    first_port = next(i for i, ln in enumerate(cut.splitlines(), 1) if ln.startswith("[1]"))
    assert errs[0][0] == first_port and "does not describe" in errs[0][2]
    assert len(errs) == MAX_IBNET_DIAGS + 1 and errs[-1][2].startswith("... and ")
    assert errs[-1][0] >= errs[-2][0]


# ----------------------------------------------------------------------------- real formats


def test_ca_cabled_to_a_router_or_another_ca() -> None:
    """ibnetdiscover prints `` (guid) `` after a peer that is not a switch: such a CA port
    line was "cannot read this line"."""
    rt = 0x200
    text = "\n".join(
        [
            "#",
            *_switch(SW, "leaf1", [_sw_port(1, f"H-{CA:016x}", 1, CA + 1)]),
            *_ca(
                CA,
                "node01 HCA-1",
                [
                    _ca_port(1, CA, f"S-{SW:016x}", 1),
                    _ca_port(2, CA, f"R-{rt:016x}", 1, rt + 1),
                    _ca_port(3, CA, "H-0000000000000300", 1, 0x301),
                ],
                ports=3,
            ),
            *_ca(0x300, "peer", [_ca_port(1, 0x300, f"H-{CA:016x}", 3, CA + 3)]),
            "",
            f"rtguid=0x{rt:x}",
            f'Rt\t1 "R-{rt:016x}"\t\t# "ib router"',
            _ca_port(1, rt, f"H-{CA:016x}", 2, CA + 2),
        ]
    )
    imp = infer_fabric(parse_ibnetdiscover(text), "x")
    assert [(h.name, h.port) for h in imp.hosts] == [("node01", 1)]


def test_grouping_output_is_read() -> None:
    """``ibnetdiscover -g`` adds ``Chassis N (guid ...)`` and ``Non-Chassis Nodes`` lines; its
    ``[ext N]`` port numbers were read, its chassis lines were not."""
    body = (FIXTURES / "demo-core2.txt").read_text()
    grouped = (
        "#\n# Topology file\n#\n\nChassis 1 (guid 0x2c90200200000)\n\n# Spine Nodes\n"
        + body.replace("[13]\t", "[13][ext 1]\t")
        + "\nNon-Chassis Nodes\n\nHostname: core2\n"
    )
    want = infer_fabric(parse_ibnetdiscover(body), "x")
    assert infer_fabric(parse_ibnetdiscover(grouped), "x") == want


@pytest.mark.parametrize("char", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029"])
def test_line_numbers_count_only_line_ends(char: str) -> None:
    """``str.splitlines`` also breaks at a form feed, U+0085, U+2028 ...: a description holding
    one was cut in two ("cannot read this line" on a line the editor does not show), and every
    line number after it was off."""
    text = small(ca_desc=f"node01{char}HCA") + "garbage\n"
    assert _errors(text) == [(11, "E-IBNET", "cannot read this line: 'garbage'")]


def test_terminal_escape_codes_get_a_hint() -> None:
    """A capture saved from a coloured terminal: the line says why it cannot be read."""
    with pytest.raises(InputError) as exc:
        parse_ibnetdiscover("\x1b[1mSwitch\x1b[0m\n" + small(), "f")
    (diag,) = exc.value.diagnostics
    assert diag.line == 1 and "terminal escape codes" in diag.hint
    assert "\x1b" not in diag.format()


def test_crlf_and_cr_files_read_as_the_fixture() -> None:
    text = (FIXTURES / "demo-core2.txt").read_text()
    want = parse_ibnetdiscover(text)
    for eol in ("\r\n", "\r"):
        assert parse_ibnetdiscover(text.replace("\n", eol)) == want


# ----------------------------------------------------------------------------- terminal, YAML


def _upper_switch_net(desc: str) -> str:
    """leaf1 (with a host) - spine - a switch above it described ``desc``: left out, noted."""
    sp, top = 0x20, 0x30
    return (
        "\n".join(
            [
                "#",
                *_switch(
                    SW,
                    "leaf1",
                    [_sw_port(1, f"H-{CA:016x}", 1, CA + 1), _sw_port(30, f"S-{sp:016x}", 1)],
                ),
                *_switch(
                    sp, "sp", [_sw_port(1, f"S-{SW:016x}", 30), _sw_port(2, f"S-{top:016x}", 1)]
                ),
                *_switch(top, desc, [_sw_port(1, f"S-{sp:016x}", 2)]),
                *_ca(CA, "node01 HCA-1", [_ca_port(1, CA, f"S-{SW:016x}", 1)]),
            ]
        )
        + "\n"
    )


def test_descriptions_reach_no_terminal_raw(tmp_path: Path) -> None:
    """A left-out switch's description was written as it is into the note on stderr and the
    YAML comment: a bidi override reordered the line, an escape code drove the terminal."""
    code, out, err, _path = _import(tmp_path, _upper_switch_net("top\x1b]0;pwn\x07\u202eRED"))
    assert code == 0
    for stream in (out, err):
        assert "\x1b" not in stream and "\u202e" not in stream and "\x07" not in stream
        assert "top\\x1b]0;pwn\\x07\\u202eRED" in stream
    long = _import(tmp_path, _upper_switch_net("t" * 10_000))[2]
    assert "t" * 61 not in long and "(10000 characters)" in long


def test_file_name_with_a_line_break_does_not_change_the_yaml(tmp_path: Path) -> None:
    """The file name went into the first comment line as it is: a line break in it made the
    rest of the name a YAML key (``fabrics: evil``) of the output."""
    name = "a\nfabrics: evil\x1b[31m\u202e.txt"
    code, out, err, _path = _import(tmp_path, small(), name=name)
    assert code == 0 and "\x1b" not in out + err and "\u202e" not in out + err
    doc = yaml.safe_load(out)
    assert doc["fabrics"][0]["name"] == "a-fabrics-evil-31m"
    assert out.splitlines()[0].startswith("# fabric discovered from a\\nfabrics: evil\\x1b")


def test_stdin_errors_are_located_at_stdin() -> None:
    """Parse errors of standard input were located at ``-``, the emptiness at ``<stdin>``."""
    r = CliRunner().invoke(main, ["fabric", "import", "ibnetdiscover", "-"], input=small() + "x\n")
    assert r.exit_code == 2 and "<stdin>:11:1: error[E-IBNET]" in r.stderr


# ----------------------------------------------------------------------------- scale


def test_many_leaf_spine_pairs_in_seconds(tmp_path: Path) -> None:
    """``n not in spines`` (a list) per switch made 10,000 leaf/spine pairs take 40 s."""
    lines = ["#"]
    n = 3000
    for i in range(n):
        g, s, h = 0x100000 + i, 0x200000 + i, 0x9000000 + 2 * i
        lines += _switch(
            g, f"leaf{i}", [_sw_port(1, f"H-{h:016x}", 1, h + 1), _sw_port(36, f"S-{s:016x}", 1)]
        )
        lines += _switch(s, f"spine{i}", [_sw_port(1, f"S-{g:016x}", 36)])
        lines += _ca(h, f"n{i} HCA", [_ca_port(1, h, f"S-{g:016x}", 1)])
    net = parse_ibnetdiscover("\n".join(lines) + "\n")
    start = time.monotonic()
    imp = infer_fabric(net, "x")
    assert time.monotonic() - start < 3
    assert len(imp.hosts) == n


@pytest.mark.parametrize(
    ("name", "suggested"),
    [("../../x", "'x'"), ("a\x1bb", "'a-b'"), ("-", None), ("sion fabric", "'sion-fabric'")],
)
def test_a_fabric_name_that_would_be_changed_is_refused(
    tmp_path: Path, name: str, suggested: str | None
) -> None:
    """``--name '../../x'`` wrote ``name: x`` and ``--name $'a\\x1bb'`` ``name: a-b``, exit 0:
    the name the administrator typed was changed without a word."""
    code, out, err, _p = _import(tmp_path, small(), "--name", name)
    assert code == 2 and out == "", (code, out, err)
    assert "--name" in err and "a fabric name starts with a letter or digit" in err, err
    assert "\x1b" not in err
    if suggested:
        assert f"for instance {suggested}" in err, err


def test_a_fabric_name_as_it_is_written_is_kept(tmp_path: Path) -> None:
    code, out, err, _p = _import(tmp_path, small(), "--name", "sion_2.a-b")
    assert code == 0, err
    assert "name: sion_2.a-b" in out


@pytest.mark.parametrize("name", ["sion-", "a.", "X" * 63])
def test_every_name_the_inventory_takes_is_taken(tmp_path: Path, name: str) -> None:
    """``--name sion-`` was refused although the inventory's schema takes it (the check
    stripped a trailing '-' or '.', as it does for names read from node descriptions)."""
    import json
    import re

    schema = json.loads((ROOT / "schemas" / "site.schema.json").read_text(encoding="utf-8"))
    assert re.fullmatch(schema["$defs"]["name"]["pattern"].strip("^$"), name)
    code, out, err, _p = _import(tmp_path, small(), "--name", name)
    assert code == 0, err
    assert f"name: {name}" in out
