"""Hostile live dumps, second sweep: values that made the readers raise a Python error
(thousands of digits), numbers Python reads and LNet does not (fullwidth digits, ``1_0``), the
document path of every located error, the line a message refers to, and a dump of 64 Mi empty
lines read in one pass."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from lnetgen.cli import main
from lnetgen.live import LiveParseError, parse_dump, read_live

ROOT = Path(__file__).resolve().parent.parent
DIGITS = "9" * 5000
ENTRY = "    - net: o2ib100\n      gateway: 201@gni\n      hop: {hop}\n      priority: {prio}\n"
HEAD = (
    "net:\n    - net type: gni\n      local NI(s):\n        - interfaces:\n"
    "              0: ipogif0\n"
)


def _error(text: str, name: str = "nid00001.yaml") -> LiveParseError:
    with pytest.raises(LiveParseError) as info:
        parse_dump(text, name)
    return info.value


# the values that raised ValueError (int() refuses more than 4,300 digits) out of the readers
HUGE = {
    "global": ("global:\n    drop_asym_route: " + DIGITS + "\n", 2, "$.global.drop_asym_route"),
    "buffers": ("buffers:\n    tiny: " + DIGITS + "\n", 2, "$.buffers.tiny"),
    "ni-tunables": (
        HEAD.replace(
            "interfaces:",
            "tunables:\n              peer_credits: " + DIGITS + "\n          interfaces:",
        ),
        5,
        "$.net[0].local NI(s)[0].tunables.peer_credits",
    ),
    "route-net": (
        "route:\n" + ENTRY.format(hop=1, prio=0).replace("o2ib100", "o2ib" + DIGITS),
        2,
        "$.route[0].net",
    ),
    "gateway": (
        "route:\n" + ENTRY.format(hop=1, prio=0).replace("201@gni", "1@o2ib" + DIGITS),
        3,
        "$.route[0].gateway",
    ),
    "net-type": ("net:\n    - net type: o2ib" + DIGITS + "\n", 2, "$.net[0].net type"),
    "lctl": (
        "Routing enabled\nnet hops priority state router\no2ib" + DIGITS + " 1 0 up 1@gni\n",
        3,
        "$",
    ),
    "modprobe": (
        "options lnet networks=gni(ipogif0) lnet_transaction_timeout=" + DIGITS + "\n",
        1,
        "$",
    ),
    "modprobe-lnd": (
        "options lnet networks=gni(ipogif0)\noptions kgnilnd peer_credits=" + DIGITS + "\n",
        2,
        "$",
    ),
}


@pytest.mark.parametrize("name", sorted(HUGE))
def test_thousands_of_digits_are_a_located_dump_error(name: str) -> None:
    text, line, path = HUGE[name]
    d = _error(text, "nid00001.txt" if name == "lctl" else "nid00001.yaml").diagnostic
    assert (d.code, d.line, d.path) == ("E-LIVE-PARSE", line, path), d.format()
    assert len(d.message) < 500


def test_peer_nid_of_thousands_of_digits_is_skipped() -> None:
    state = parse_dump(HEAD + "peer:\n    - primary nid: 1@o2ib" + DIGITS + "\n", "n.yaml")
    assert not state.peers


@pytest.mark.parametrize(
    "value", ["\uff11", "\u0661", "1_0", "1e400", "0x10", DIGITS, "[1]", "1\u202e"]
)
@pytest.mark.parametrize("key", ["hop", "priority"])
def test_hop_and_priority_are_ascii_integers(key: str, value: str) -> None:
    fields = {"hop": "1", "prio": "0"}
    fields["hop" if key == "hop" else "prio"] = value
    text = HEAD + "route:\n" + ENTRY.format(**fields)
    d = _error(text).diagnostic
    assert d.path == f"$.route[0].{key}", d.format()
    assert d.line == (9 if key == "hop" else 10)


def test_tunables_and_udsp_are_ascii_integers() -> None:
    d = _error("global:\n    drop_asym_route: \uff11\n").diagnostic
    assert d.path == "$.global.drop_asym_route"
    d = _error(HEAD + "udsp:\n    - idx: \u0661\n      dst: o2ib100\n").diagnostic
    assert d.path == "$.udsp[0]"


def test_errors_name_their_place_in_the_document() -> None:
    cases = {
        "route:\n" + ENTRY.format(hop=0, prio=0): "$.route[0].hop",
        "route:\n" + ENTRY.format(hop=1, prio=-1): "$.route[0].priority",
        "route:\n" + ENTRY.format(hop=1, prio=0) * 2 + "    - net: o2ib1\n": "$.route[2]",
        "route:\n    - 5\n": "$.route[0]",
        "route: {net: x}\n": "$.route",
        "routing:\n    enable: maybe\n": "$.routing.enable",
        "net:\n    - net type: foo9\n": "$.net[0].net type",
        HEAD.replace("- interfaces", "- nid: x@y\n          interfaces"): "$.net[0].local NI(s)[0]",
    }
    for text, path in cases.items():
        assert _error(text).diagnostic.path == path, text


def test_duplicate_key_names_the_file_line_of_the_first() -> None:
    text = (
        HEAD
        + "route:\n"
        + ENTRY.format(hop=1, prio=0).replace("hop: 1\n", "hop: 1\n      hop: 2\n")
    )
    d = _error(text).diagnostic
    assert (d.line, d.path) == (10, "$.route[0].hop")
    assert d.message.endswith("duplicate key 'hop' (first at line 9)"), d.message


def test_empty_lines_are_skipped_in_one_pass() -> None:
    start = time.perf_counter()
    d = _error("\n" * (8 << 20)).diagnostic
    assert d.code == "E-LIVE-EMPTY"
    assert time.perf_counter() - start < 2.0  # the line loop took ~4 s for 8 Mi lines


def test_diff_exits_1_without_a_traceback(tmp_path: Path) -> None:
    """The whole command: the unreadable dump is listed and the exit status is 1."""
    live = tmp_path / "live"
    live.mkdir()
    (live / "rtr01.yaml").write_text("global:\n    drop_asym_route: " + DIGITS + "\n")
    got = read_live(str(live))
    assert [d.path for d in got.errors] == ["$.global.drop_asym_route"]
    runner = CliRunner()
    result = runner.invoke(
        main, ["diff", str(ROOT / "sites" / "demo.yaml"), "--live", str(live), "-q"]
    )
    assert result.exit_code == 1, result.output
    assert "$.global.drop_asym_route" in result.output
    assert not isinstance(result.exception, ValueError)


def test_verify_keeps_the_document_path_of_an_unreadable_file(tmp_path: Path) -> None:
    """verify rebuilt every unreadable file's error with ``$``, where diff names the place."""
    from lnetgen.api import generate, write_output

    out = tmp_path / "out"
    write_output(generate(str(ROOT / "sites" / "demo.yaml"), "groups"), str(out))
    target = out / "lnetctl" / "rtr01.yaml"
    target.write_text(target.read_text() + "global:\n    drop_asym_route: " + DIGITS + "\n")
    result = CliRunner().invoke(main, ["verify", str(out), "--format", "json"])
    assert result.exit_code in (1, 2), result.output
    assert "$.global.drop_asym_route" in result.output, result.output
