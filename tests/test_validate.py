"""Inventory validation: golden case directories, the CLI, and robustness against any input.

A case is a directory under ``tests/cases/invalid/`` or ``tests/cases/valid/`` holding
``site.yaml`` and ``expected.txt`` (directories without ``expected.txt`` belong to other suites).

* invalid: every line of ``expected.txt`` must be among the diagnostics ``check("site.yaml")``
  returns, run inside the case directory so paths are relative;
* valid: no errors, and exactly the diagnostics in ``expected.txt`` (usually none); and
  validate's dry solve of its default strategy finds no error either.

``LNETGEN_REGEN=1`` rewrites ``expected.txt`` (create an empty one for a new case first); a
mismatch fails and writes ``expected.txt.actual`` beside it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from conftest import CASES, ROOT, regen, wolf_unrecorded
from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen import inventory, yamlsrc
from lnetgen.diagnostics import Diagnostic, InputError, errors
from lnetgen.drysolve import dry_solve
from lnetgen.inventory import CODES, build, check, check_source, load_site
from lnetgen.inventory.codes import SOLVED_CODES


def _cases(kind: str) -> list[str]:
    return sorted(p.parent.name for p in (CASES / kind).glob("*/expected.txt"))


INVALID = _cases("invalid")
VALID = _cases("valid")

#: Codes no case directory can show cheaply, each proven by a unit test below.
UNIT_TESTED = {"E-FILE-SIZE", "E-YAML-SIZE", "E-SYNTAX", "E-RATES", "W-IO-SAME-PORT"}


def _run_case(case_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Diagnostic]]:
    monkeypatch.chdir(case_dir)
    return check("site.yaml")


def _compare(case_dir: Path, lines: list[str]) -> None:
    golden = case_dir / "expected.txt"
    actual = case_dir / "expected.txt.actual"
    text = "".join(line + "\n" for line in lines)
    if regen():
        golden.write_text(text, encoding="utf-8")
        actual.unlink(missing_ok=True)
        return
    assert golden.exists(), f"{golden} is missing; run with LNETGEN_REGEN=1 to create it"
    expected = [ln for ln in golden.read_text(encoding="utf-8").splitlines() if ln.strip()]
    missing = [ln for ln in expected if ln not in lines]
    if missing:
        actual.write_text(text, encoding="utf-8")
        pytest.fail(
            "expected diagnostics not produced:\n  "
            + "\n  ".join(missing)
            + "\ngot:\n  "
            + "\n  ".join(lines)
            + f"\n(actual output written to {actual})"
        )
    actual.unlink(missing_ok=True)


@pytest.mark.parametrize("case", INVALID)
def test_invalid_case(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    case_dir = CASES / "invalid" / case
    site, diags = _run_case(case_dir, monkeypatch)
    lines = [d.format() for d in diags]
    assert diags, "an invalid case must produce diagnostics"
    assert all(d.file and d.code in CODES for d in diags), lines
    if errors(diags):
        assert site is None
    else:  # a warning-only case still yields the site
        assert site is not None
    _compare(case_dir, lines)


@pytest.mark.parametrize("case", VALID)
def test_valid_case(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    case_dir = CASES / "valid" / case
    site, diags = _run_case(case_dir, monkeypatch)
    assert not errors(diags), [d.format() for d in diags]
    assert site is not None
    lines = [d.format() for d in diags]
    _compare(case_dir, lines)
    expected = (case_dir / "expected.txt").read_text(encoding="utf-8").splitlines()
    assert lines == [ln for ln in expected if ln.strip()]


@pytest.mark.parametrize("case", VALID)
def test_valid_case_solves(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A valid case is one ``lnetgen validate`` accepts: its default strategy solves too."""
    monkeypatch.chdir(CASES / "valid" / case)
    site, diags = dry_solve("site.yaml")
    assert site is not None
    assert not errors(diags), [d.format() for d in diags]


def test_invalid_cases_cover_every_code() -> None:
    """Each diagnostic code is shown by at least one case (or by a unit test here)."""
    assert len(INVALID) >= 25 and len(VALID) >= 4
    seen: set[str] = set()
    for case in INVALID:
        golden = CASES / "invalid" / case / "expected.txt"
        seen.update(re.findall(r"(?:error|warning)\[([A-Z0-9-]+)\]", golden.read_text()))
    # the default strategy's output findings (validate's dry solve), tests/test_journey_emit.py
    assert set(CODES) - seen - UNIT_TESTED - SOLVED_CODES == set()
    assert seen <= set(CODES)


def test_every_code_the_inventory_raises_is_listed() -> None:
    """``E-LUSTRE-UDSP`` was raised by validate and documented, but missing from ``CODES``, so
    no case had to show it.  Every code named in the inventory's source is listed (the fabric's
    IO-port warning included)."""
    named: set[str] = set()
    for path in (ROOT / "lnetgen" / "inventory").rglob("*.py"):
        named.update(re.findall(r'"([EW]-[A-Z0-9-]+)"', path.read_text(encoding="utf-8")))
    assert named - set(CODES) == set()


def test_docs_list_every_code() -> None:
    doc = (ROOT / "docs" / "inventory.md").read_text(encoding="utf-8")
    assert [c for c in CODES if f"`{c}`" not in doc] == []


# ----------------------------------------------------------------------------- model details


def test_demo_model() -> None:
    site, warnings = load_site(str(ROOT / "sites" / "demo.yaml"))
    assert warnings == []
    assert len(site.clients) == 96 and len(site.routers) == 20 and len(site.servers) == 14
    assert site.clients.nids[0] == "1@gni"
    # linear xyz numbering skips the chips' router slots: rtr01 sits on [0, 0, 0]
    assert site.clients.coords[0].tolist() == [0, 0, 0]
    assert site.clients.coords[1].tolist() == [1, 0, 0]
    assert site.switch("core1") is not None
    assert site.switch("core1").leaf("L03") is not None  # type: ignore[union-attr]
    assert len(site.digest) == 64


def test_zyx_order_skips_router_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES / "valid" / "torus-zyx")
    site, diags = check("site.yaml")
    assert site is not None, [d.format() for d in diags]
    coords = [tuple(c) for c in site.clients.coords.tolist()]
    # z varies fastest; [0, 0, 0] holds a router and nodes_per_chip is 1
    assert coords == [(0, 0, 1), (0, 1, 0), (1, 0, 1), (1, 1, 0)]
    router_slots = {r.coords for r in site.routers}
    assert not router_slots & set(coords)


def test_load_site_raises_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES / "invalid" / "dup-nid")
    with pytest.raises(InputError) as exc:
        load_site("site.yaml")
    assert any(d.code == "E-DUP-NID" for d in exc.value.diagnostics)


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    _site, diags = check(str(tmp_path))
    assert [d.code for d in diags] == ["E-FILE"]


@pytest.mark.parametrize(
    "text",
    ["root:*:20228:0:99999:7:::\nbin:*:20228:0:99999:7:::\n", "root:x:0:0:root:/root:/bin/sh\n"],
)
def test_a_file_that_is_not_an_inventory_is_not_echoed(tmp_path: Path, text: str) -> None:
    """A password file read as an inventory is one E-EMPTY that quotes nothing of it (its
    first line came back as an unknown key, or as "got the text ...")."""
    path = tmp_path / "site.yaml"
    path.write_text(text)
    _site, diags = check(str(path))
    assert [d.code for d in diags] == ["E-EMPTY"]
    assert "root" not in diags[0].message + diags[0].path + diags[0].hint


def test_file_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "site.yaml"
    path.write_text("site: x\n" * 10)
    with pytest.raises(InputError) as exc:
        yamlsrc.read_text(str(path), max_bytes=16)
    assert exc.value.diagnostics[0].code == "E-FILE-SIZE"


def test_alias_bomb_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlsrc, "MAX_NODES", 1000)
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for k in "bcde":
        prev = chr(ord(k) - 1)
        text += f"{k}: &{k} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
    with pytest.raises(InputError) as exc:
        yamlsrc.load_text(text, "bomb.yaml")
    assert exc.value.diagnostics[0].code == "E-YAML-SIZE"


def test_syntax_fallback_is_located(monkeypatch: pytest.MonkeyPatch) -> None:
    """A node-set syntax that slips past every specific check is still a diagnostic."""

    def boom(*_a: object, **_k: object) -> object:
        raise inventory.nodes.NodeSyntaxError("unexpected syntax")

    monkeypatch.setattr(build, "check_fabrics", boom)
    _site, diags = check(str(ROOT / "sites" / "demo.yaml"))
    assert [d.code for d in diags] == ["E-SYNTAX"]


def test_rate_fallback_is_located(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rate the schema let through but the parser refuses is E-RATES at the rate."""
    from lnetgen.inventory import rates

    def refuse(text: str) -> float:
        raise ValueError(f"{text!r} is not a rate")

    monkeypatch.setattr(rates, "parse_rate", refuse)
    _site, diags = check(str(CASES / "valid" / "dragonfly" / "site.yaml"))
    got = [d for d in diags if d.code == "E-RATES"]
    assert [d.path for d in got] == [
        f"$.rates.{k}" for k in ("injection", "local_link", "global_link", "router")
    ]


# ----------------------------------------------------------------------------- CLI


def test_cli_exit_codes_and_json(monkeypatch: pytest.MonkeyPatch) -> None:
    from lnetgen.cli import main

    runner = CliRunner()
    ok = runner.invoke(main, ["validate", str(ROOT / "sites" / "demo.yaml")])
    assert ok.exit_code == 0, ok.output
    assert "valid (0 error(s), 0 warning(s), 4 note(s))" in ok.output

    monkeypatch.chdir(CASES / "invalid" / "dup-nid")
    bad = runner.invoke(main, ["validate", "site.yaml"])
    assert bad.exit_code == 1
    assert "error[E-DUP-NID]" in bad.output
    assert "Traceback" not in bad.output

    as_json = runner.invoke(main, ["validate", "--format", "json", "site.yaml"])
    assert as_json.exit_code == 1
    doc = json.loads(as_json.output)
    assert doc["errors"] >= 1
    first = doc["diagnostics"][0]
    assert set(first) >= {"file", "line", "col", "severity", "code", "path", "message", "hint"}
    assert first["file"] == "site.yaml"


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("empty-file", 1),
        ("binary-file", 1),
        ("yaml-syntax-bracket", 1),
        ("file-is-directory", 2),  # SITE must be a file: an input error
        ("schema-errors-and-meaning", 1),
        ("router-spread", 0),  # warnings only
    ],
)
def test_cli_never_a_traceback(case: str, code: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from lnetgen.cli import main

    monkeypatch.chdir(CASES / "invalid" / case)
    result = CliRunner().invoke(main, ["validate", "site.yaml"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    if code == 2:  # not an inventory at all: no verdict, the located reason
        assert "site.yaml: error[E-FILE] $: is a directory" in result.output
    else:
        summary = "valid" if code == 0 else "invalid"
        assert f"site.yaml: {summary} (" in result.output


# ----------------------------------------------------------------------------- robustness

# small torus and fat-tree sites; mutations of them exercise every stage of the checks
BASES: dict[str, Any] = {}
for _name in ("explicit-nids", "fat-tree"):
    with open(CASES / "valid" / _name / "site.yaml", encoding="utf-8") as _fh:
        BASES[_name] = yaml.safe_load(_fh)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _paths(v, (*prefix, i))
    return out


def _leaves(data: Any) -> list[Any]:
    return [v for p in _paths(data) if not isinstance(v := _get(data, p), dict | list)]


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        data = data[p]
    return data


_odd = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.sampled_from(["", "on", "0755", "2.10", "L99", "core9", "../x", "a b", "1@elan", "x@gni"]),
    st.text(max_size=12),
)


def _mutate(data: Any, path: tuple[Any, ...], how: str, value: Any) -> Any:
    doc = json.loads(json.dumps(data))
    parent = _get(doc, path[:-1])
    last = path[-1]
    if how == "delete":
        del parent[last]
    elif how == "duplicate" and isinstance(parent, list):
        parent.append(json.loads(json.dumps(parent[last])))
    else:
        parent[last] = value
    return doc


def _edits(base: str) -> st.SearchStrategy[list[tuple[tuple[Any, ...], str, Any]]]:
    values = st.one_of(_odd, st.sampled_from(_leaves(BASES[base])))  # the site's own values
    edit = st.tuples(
        st.sampled_from(_paths(BASES[base])[1:]),
        st.sampled_from(["delete", "replace", "duplicate"]),
        values,
    )
    return st.lists(edit, min_size=1, max_size=3)


@settings(max_examples=int(os.environ.get("LNETGEN_FUZZ_EXAMPLES", "60")))
@given(st.sampled_from(sorted(BASES)).flatmap(lambda b: st.tuples(st.just(b), _edits(b))))
def test_mutated_sites_never_raise(
    case: tuple[str, list[tuple[tuple[Any, ...], str, Any]]],
) -> None:
    """Whatever is deleted, retyped or duplicated, ``check_source`` returns diagnostics."""
    base, edits = case
    doc: Any = BASES[base]
    for path, how, value in edits:
        try:
            doc = _mutate(doc, path, how, value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed this path
    text = yaml.safe_dump(doc, sort_keys=False)
    src = yamlsrc.load_text(text, "mutated.yaml")
    site, diags = check_source(src)
    assert all(d.code in CODES for d in diags), [d.format() for d in diags]
    if errors(diags):
        assert site is None
    else:
        assert site is not None


@settings(max_examples=int(os.environ.get("LNETGEN_FUZZ_EXAMPLES", "100")))
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}\"'#&*!|>%@`,?\n\t 01")), max_size=60))
def test_arbitrary_text_never_raises(text: str) -> None:
    try:
        src = yamlsrc.load_text(text, "x.yaml")
    except InputError as exc:
        assert exc.diagnostics and all(d.code in CODES for d in exc.diagnostics)
        return
    _site, diags = check_source(src)
    assert diags and all(d.code in CODES for d in diags)


# ----------------------------------------------------------------------------- acknowledge


def test_an_acknowledged_warning_is_listed_by_validate_only(tmp_path: Path) -> None:
    """Wolf's W-IO-SAME-PORT was repeated by every command; acknowledged in the inventory, only
    validate lists it (as acknowledged, with the reason)."""
    from lnetgen.cli import main

    text = wolf_unrecorded().read_text(encoding="utf-8")
    site = tmp_path / "wolf.yaml"
    ack = '\nacknowledge:\n  - code: W-IO-SAME-PORT\n    reason: "recabling in May"\n'
    site.write_text(text + ack, encoding="utf-8")
    runner = CliRunner()
    r = runner.invoke(main, ["validate", str(site)])
    assert r.exit_code == 0, r.output
    assert "acknowledged[W-IO-SAME-PORT] $.routers[0].client.attach.port: 24 IO nodes" in r.output
    assert "(hint: acknowledged: recabling in May)" in r.output
    assert "valid (0 error(s), 0 warning(s), " in r.output and " 1 acknowledged)" in r.output
    doc = json.loads(runner.invoke(main, ["validate", "--format", "json", str(site)]).stdout)
    assert doc["warnings"] == 0 and [d["code"] for d in doc["acknowledged"]] == ["W-IO-SAME-PORT"]
    r = runner.invoke(main, ["solve", str(site)])
    assert r.exit_code == 0 and "W-IO-SAME-PORT" not in r.output
    plain = runner.invoke(main, ["solve", str(wolf_unrecorded())])
    assert "warning[W-IO-SAME-PORT]" in plain.output  # without the entry it is repeated


def test_routers_sharing_a_lone_tor_are_not_warned_about(tmp_path: Path) -> None:
    """W-ROUTERS-PER-LEAF is about spines: a compute TOR without uplinks has none (the
    multirail case's two routers share one); the same TOR cabled to a core is warned about."""
    src = CASES / "valid" / "multirail" / "site.yaml"
    site, diags = check(str(src))
    assert site is not None and "W-ROUTERS-PER-LEAF" not in {d.code for d in diags}
    text = src.read_text()
    old = "{name: comp-tor1, kind: tor, ports: 36, uplinks: 0,"
    assert old in text
    path = tmp_path / "site.yaml"
    path.write_text(text.replace(old, "{name: comp-tor1, kind: tor, ports: 36, uplinks: 4,"))
    _site, diags = check(str(path))
    assert "W-ROUTERS-PER-LEAF" in {d.code for d in diags}


# A plain scalar where text is expected: the hint, followed, must cure the error.
_TYPE_TRAPS = [
    # (line of sites/demo.yaml, the same line with the trap, a word the hint must hold)
    ("  storage_lnd: o2ib\n", "  storage_lnd: 5\n", "o2ib"),
    ("    interface: ib0\n", "    interface: on\n", "Linux interface name"),
    ("  - name: oss01\n", "  - name: 123\n", 'quote it: "123"'),
]


@pytest.mark.parametrize(("line", "trap", "word"), _TYPE_TRAPS)
def test_type_hint_proposes_only_a_value_that_validates(
    line: str, trap: str, word: str, tmp_path: Path
) -> None:
    """``quote it: "15"`` was the hint for a rate given as ``15``, and ``"15"`` still fails
    (no unit); ``interface: on`` was told to quote ``"on"``, which the interface pattern
    refuses too.  The hint proposes the quoted text only when it would pass; otherwise it
    says what would (the allowed words, the value's form)."""
    text = (ROOT / "sites" / "demo.yaml").read_text(encoding="utf-8")
    assert line in text
    path = tmp_path / "site.yaml"
    path.write_text(text.replace(line, trap, 1), encoding="utf-8")
    _, diags = check(str(path))
    (d,) = [d for d in diags if d.code == "E-SCHEMA-TYPE"]
    assert word in d.hint, d.format()
    quoted = re.fullmatch(r'quote it: "(.*)"', d.hint)
    if quoted:  # following the hint cures the error at that path
        value = trap.split(": ")[-1].strip()
        path.write_text(text.replace(line, trap.replace(value, f'"{value}"'), 1))
        _, again = check(str(path))
        assert not [e for e in errors(again) if e.path == d.path], [e.format() for e in again]


def test_rate_without_unit_hint_shows_a_unit(tmp_path: Path) -> None:
    """``torus_link: {z: 15}`` (journey B's r5.yaml): the hint shows a rate with its unit, as
    the E-SCHEMA hint of a quoted ``"15"`` does, not ``quote it: "15"``."""
    text = (ROOT / "sites" / "demo.yaml").read_text(encoding="utf-8")
    rates = 'rates:\n  torus_link: {x: "9.375 GB/s", y: "4.6875 GB/s", z: 15, source: test}\n'
    (tmp_path / "site.yaml").write_text(text + rates, encoding="utf-8")
    _, diags = check(str(tmp_path / "site.yaml"))
    (d,) = [d for d in diags if d.code == "E-SCHEMA-TYPE"]
    assert d.path == "$.rates.torus_link.z"
    assert '"15"' not in d.hint and "MB/s" in d.hint, d.format()
    (tmp_path / "site.yaml").write_text(text + rates.replace("z: 15", 'z: "15"'))
    _, quoted = check(str(tmp_path / "site.yaml"))
    assert [e.hint for e in quoted if e.path == d.path] == [d.hint]
