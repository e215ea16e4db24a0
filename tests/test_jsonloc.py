"""Errors about lnetgen's own JSON files (plans, a generated tree's manifest) name the line and
column of what is wrong, not only its JSON path (they used to say line 0)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import json_documents
from hypothesis import given
from hypothesis import strategies as st

from lnetgen import jsonloc, strictjson
from lnetgen.cli import main
from lnetgen.diagnostics import json_path

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "sites" / "demo.yaml")

KEYS = st.text(alphabet=st.characters(blacklist_characters=".[]"), max_size=4)
JSON = json_documents(KEYS, max_leaves=25)


def _paths(doc: Any, at: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    yield at, doc
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, (*at, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _paths(value, (*at, i))


def _offset(text: str, line: int, col: int) -> int:
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + col - 1


@given(JSON, st.sampled_from([None, 1, 2]))
def test_every_value_is_located_where_it_is_written(doc: Any, indent: int | None) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    for at, value in _paths(doc):
        line, col = jsonloc.locate(text, json_path(at))
        assert line >= 1, at
        found, _ = json.JSONDecoder().raw_decode(text, _offset(text, line, col))
        assert found == value or (found != found and value != value)


@given(JSON)
def test_a_path_the_document_lacks_is_placed_at_its_nearest_ancestor(doc: Any) -> None:
    text = json.dumps({"a": doc, "b": 1})
    assert jsonloc.locate(text, "$.a.no_such_key_in_any_doc[7]") == (1, 7)
    assert jsonloc.locate(text, "$.c[7]") == (1, 1)
    assert jsonloc.locate(text, "routers") == (0, 0)


@given(KEYS, JSON, JSON, st.sampled_from([None, 2]))
def test_a_repeated_key_is_placed_at_its_second_naming(
    key: str, first: Any, second: Any, indent: int | None
) -> None:
    inner = json.dumps({key: first}, indent=indent)[:-1].rstrip() + ", " + json.dumps(key)
    inner += ": " + json.dumps(second) + "}"
    text = '{"files": [0, ' + inner + "]}"
    with pytest.raises(strictjson.JSONError) as err:
        strictjson.loads(text)
    exc = err.value
    assert exc.path == json_path(("files", 1, key))
    where = _offset(text, exc.line, exc.col)
    assert text[where:].startswith(json.dumps(key) + ": " + json.dumps(second))


def test_not_json_and_constants_are_placed() -> None:
    with pytest.raises(strictjson.JSONError) as err:
        strictjson.loads('{"a": 1,\n  "b": [1, NaN]}')
    assert (err.value.line, err.value.col, err.value.path) == (2, 12, "$.b[1]")
    assert str(err.value) == "NaN is not a JSON number (line 2 column 12)"
    with pytest.raises(strictjson.JSONError) as err:
        strictjson.loads('{"a": 1,\n  "b": [1, }')
    assert (err.value.line, err.value.col, err.value.path) == (2, 12, "$")


def _plan(tmp_path: Path) -> Path:
    plan = tmp_path / "plan.json"
    result = CliRunner().invoke(main, ["solve", DEMO, "--out", str(plan)])
    assert result.exit_code == 0, result.output
    return plan


def test_a_bad_plan_value_names_its_line_and_column(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    doc = json.loads(plan.read_text(encoding="utf-8"))
    doc["routers"][1]["hop"] = 0
    text = json.dumps(doc, indent=2)
    plan.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(
        main, ["generate", DEMO, "--plan", str(plan), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 2, result.output
    line, col = jsonloc.locate(text, "$.routers[1]")
    assert line > 1
    assert f"{plan}:{line}:{col}: error[E-PLAN] $.routers[1]:" in result.output
    assert text.split("\n")[line - 1][col - 1] == "{"


def test_a_plan_repeating_a_key_names_its_line_and_column(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    text = plan.read_text(encoding="utf-8")
    plan.write_text('{\n  "site": "elsewhere",\n' + text[1:], encoding="utf-8")
    result = CliRunner().invoke(
        main, ["generate", DEMO, "--plan", str(plan), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 2, result.output
    assert (
        ": error[E-PLAN] $.site: not a plan.json (not JSON: key 'site' appears twice"
        in result.output
    )
    assert f"{plan}:0:0" not in result.output


def test_a_manifest_repeating_a_key_names_its_line_and_column(tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(main, ["generate", DEMO, "--out", str(out)]).exit_code == 0
    manifest = out / "manifest.json"
    manifest.write_text(
        '{"files": [],\n' + manifest.read_text(encoding="utf-8")[1:], encoding="utf-8"
    )
    result = runner.invoke(main, ["verify", str(out)])
    assert result.exit_code == 2, result.output
    assert f"{manifest}:0:0" not in result.output
    assert ":error[E-VERIFY-MANIFEST] $.files:" in result.output.replace(": error", ":error")


@pytest.mark.parametrize(
    ("edit", "where", "said"),
    [
        (lambda d: d["files"][5].update(path="../x"), "$.files[5]", "path '../x' leaves"),
        (lambda d: d["filesystems"]["home"].update(mount=""), "$.filesystems.home.mount", ""),
        (
            lambda d: d["filesystems"]["home"]["mgs_nids"].append("not a nid"),
            "$.filesystems.home.mgs_nids[1]",
            "",
        ),
        (lambda d: d["filesystems"]["home"].pop("mgs_nids"), "$.filesystems.home.mgs_nids", ""),
    ],
)
def test_a_bad_manifest_value_names_its_path_line_and_column(
    tmp_path: Path, edit: Any, where: str, said: str
) -> None:
    """Every E-VERIFY-MANIFEST was at ``$`` and line 0, the path written into the message."""
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(main, ["generate", DEMO, "--out", str(out)]).exit_code == 0
    manifest = out / "manifest.json"
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    assert doc["files"][5]["hosts"] and doc["files"][5]["role"] != "site"
    edit(doc)
    text = json.dumps(doc, indent=2)
    manifest.write_text(text, encoding="utf-8")
    result = runner.invoke(main, ["verify", str(out)])
    assert result.exit_code == 2, result.output
    line, col = jsonloc.locate(text, where)
    assert line > 1
    assert f"{manifest}:{line}:{col}: error[E-VERIFY-MANIFEST] {where}: {said}" in result.output
