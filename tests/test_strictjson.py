"""The JSON files lnetgen reads back (plans, a generated tree's manifest) are read as the JSON
standard has them: an object naming a key twice, or holding ``NaN``/``Infinity``, is refused
instead of the last key silently winning (what ``json.loads`` does)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import json_documents
from hypothesis import given
from hypothesis import strategies as st

from lnetgen import strictjson
from lnetgen.cli import main

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "sites" / "demo.yaml")

JSON = json_documents()


@given(JSON)
def test_standard_json_reads_as_json_loads_does(doc: Any) -> None:
    text = json.dumps(doc)
    assert strictjson.loads(text) == json.loads(text)


@given(st.text(max_size=6), JSON, JSON)
def test_a_repeated_key_is_refused_at_any_depth(key: str, first: Any, second: Any) -> None:
    inner = (
        "{"
        + f"{json.dumps(key)}: {json.dumps(first)}, {json.dumps(key)}: {json.dumps(second)}"
        + "}"
    )
    for text in (inner, f'{{"files": [{inner}]}}'):
        with pytest.raises(ValueError, match="appears twice"):
            strictjson.loads(text)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_python_constants_are_not_json(constant: str) -> None:
    with pytest.raises(ValueError, match="is not a JSON number"):
        strictjson.loads(f'{{"a": [{constant}]}}')


def _duplicate_files_key(manifest: Path) -> None:
    """The manifest with its ``files`` list given twice, the second one empty."""
    text = manifest.read_text(encoding="utf-8")
    assert text.startswith("{")
    manifest.write_text('{"files": [],' + text[1:], encoding="utf-8")


def test_generate_over_a_tree_whose_manifest_repeats_a_key(tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(main, ["generate", DEMO, "--out", str(out)]).exit_code == 0
    _duplicate_files_key(out / "manifest.json")
    result = runner.invoke(main, ["generate", DEMO, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "E-OUTPUT-FOREIGN" in result.output and "appears twice" in result.output


def test_diff_live_tree_whose_manifest_repeats_a_key(tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(main, ["generate", DEMO, "--out", str(out)]).exit_code == 0
    _duplicate_files_key(out / "manifest.json")
    result = runner.invoke(main, ["diff", DEMO, "--live", str(out)])
    assert result.exit_code == 2, result.output
    assert "appears twice" in result.output
