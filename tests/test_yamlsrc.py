"""YAML with source marks: round trip, marks for every path, and every failure as a diagnostic."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from lnetgen.diagnostics import InputError
from lnetgen.yamlsrc import load_file, load_text, read_text

# ----------------------------------------------------------------------------- properties

_safe_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=False),
    st.text(max_size=20),
)
_keys = st.text(max_size=10)
_documents = st.recursive(
    _safe_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(_keys, inner, max_size=4),
    ),
    max_leaves=25,
)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _paths(v, (*prefix, i))
    return out


def _same(a: Any, b: Any) -> bool:
    """Equality that also compares types, so 1 and True or 1 and 1.0 differ."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isinf(a):
        return a == b
    return bool(a == b)


@given(_documents)
def test_safe_dump_round_trips_with_a_mark_for_every_path(data: Any) -> None:
    text = yaml.safe_dump(data, sort_keys=False)
    src = load_text(text, "doc.yaml")
    assert _same(src.data, data)
    lines = text.count("\n") + 1
    for path in _paths(data):
        assert path in src.marks, path
        line, col = src.marks[path]
        assert 1 <= line <= lines and col >= 1
        value = _get(data, path)
        if not isinstance(value, dict | list):
            raw, style = src.raw[path]
            if style is None:  # a plain scalar resolves from its own text to the same value
                assert _same(yaml.safe_load(raw) if raw else None, value)


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        data = data[p]
    return data


# ----------------------------------------------------------------------------- behaviour


def test_yaml_11_values_and_their_raw_text() -> None:
    src = load_text("a: on\nb: 0755\nc: '0755'\nd: 2.10\ne: 4:3\non: x\n", "t.yaml")
    assert src.data == {"a": True, "b": 493, "c": "0755", "d": 2.1, "e": 243, "on": "x"}
    assert src.raw[("a",)] == ("on", None)
    assert src.raw[("c",)] == ("0755", "'")
    assert src.raw[("d",)] == ("2.10", None)


def test_keys_are_strings_as_written() -> None:
    src = load_text("1: a\nyes: b\nnull: c\n", "t.yaml")
    assert src.data == {"1": "a", "yes": "b", "null": "c"}


def test_marks_point_at_keys_and_items() -> None:
    src = load_text("site: x\nrouters:\n  - name: r1\n    port: 3\n", "t.yaml")
    assert src.marks[("routers", 0, "port")] == (4, 5)
    assert src.marks[("routers", 0)] == (3, 5)
    assert src.where(("routers", 0, "missing", 7)) == (3, 5)
    d = src.diag(("routers", 0, "port"), "E-X", "msg")
    assert d.format() == "t.yaml:4:5: error[E-X] $.routers[0].port: msg"


@pytest.mark.parametrize(
    ("text", "code", "line"),
    [
        ("", "E-EMPTY", 1),
        ("# only a comment\n", "E-EMPTY", 1),
        ("a: [1, 2\n", "E-YAML-SYNTAX", 2),
        ("a: 1\n\tb: 2\n", "E-YAML-SYNTAX", 2),
        ("a: 1\na: 2\n", "E-YAML-DUPKEY", 2),
        ("a: {x: 1, x: 1}\n", "E-YAML-DUPKEY", 1),
        ("b: &b {x: 1}\na:\n  <<: *b\n", "E-YAML-MERGE", 3),
        ("? [a]\n: 1\n", "E-YAML-KEY", 1),
        ("a: !!python/name:os.system ''\n", "E-YAML-TAG", 1),
        ("a: !custom 1\n", "E-YAML-TAG", 1),
        ("a: !!int nope\n", "E-YAML-SYNTAX", 1),
        ("a: \x07\n", "E-YAML-SYNTAX", 1),
        ("a: 1\n---\nb: 2\n", "E-YAML-SYNTAX", 2),
        ("a: *nowhere\n", "E-YAML-SYNTAX", 1),
        ("&a [*a]\n", "E-YAML-DEPTH", 1),
        ("[" * 200_000 + "]" * 200_000, "E-YAML-DEPTH", 1),  # crashed the C composer once
    ],
    ids=lambda v: v[:24] if isinstance(v, str) else str(v),
)
def test_problems_are_diagnostics(text: str, code: str, line: int) -> None:
    with pytest.raises(InputError) as exc:
        load_text(text, "t.yaml")
    first = exc.value.diagnostics[0]
    assert (first.code, first.line, first.file) == (code, line, "t.yaml"), first.format()


def test_all_duplicate_keys_are_reported() -> None:
    with pytest.raises(InputError) as exc:
        load_text("a: 1\na: 2\nb:\n  c: 1\n  c: 2\n", "t.yaml")
    assert [(d.code, d.line, d.path) for d in exc.value.diagnostics] == [
        ("E-YAML-DUPKEY", 2, "$.a"),
        ("E-YAML-DUPKEY", 5, "$.b.c"),
    ]


def test_read_text_problems(tmp_path: Path) -> None:
    cases = {
        "missing.yaml": None,
        "binary.yaml": b"a: 1\n\x00",
        "latin1.yaml": "a: caf\xe9\n".encode("latin-1"),
    }
    for name, blob in cases.items():
        if blob is not None:
            (tmp_path / name).write_bytes(blob)
    codes = {}
    for name in [*cases, "."]:
        with pytest.raises(InputError) as exc:
            read_text(str(tmp_path / name))
        codes[name] = (exc.value.diagnostics[0].code, exc.value.diagnostics[0].line)
    assert codes == {
        "missing.yaml": ("E-FILE", 0),
        "binary.yaml": ("E-FILE-BINARY", 2),
        "latin1.yaml": ("E-FILE-ENCODING", 1),
        ".": ("E-FILE", 0),
    }


def test_named_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "site.yaml"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as exc:
        read_text(str(fifo))
    assert exc.value.diagnostics[0].code == "E-FILE"


def test_alias_bomb_is_refused_before_expansion() -> None:
    text = 'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for k in range(1, 10):
        text += f"l{k}: &l{k} [" + ", ".join([f"*l{k - 1}"] * 9) + "]\n"
    with pytest.raises(InputError) as exc:  # 9**9 values; refused after ~2e6 counted, not built
        load_text(text, "bomb.yaml")
    assert exc.value.diagnostics[0].code == "E-YAML-SIZE"


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbfsite: x\n")
    assert load_file(str(path)).data == {"site": "x"}


@pytest.mark.parametrize(
    ("encoding", "name"),
    [
        ("utf-16", "UTF-16"),
        ("utf-16-le", "UTF-16LE"),
        ("utf-16-be", "UTF-16BE"),
        ("utf-32", "UTF-32"),
    ],
)
def test_a_utf16_file_gets_a_hint_to_convert_it(tmp_path: Path, encoding: str, name: str) -> None:
    """A UTF-16 inventory (a Windows editor's) was refused as binary with no word on why."""
    path = tmp_path / "site.yaml"
    path.write_bytes("site: demo\ndescription: from Windows\n".encode(encoding))
    with pytest.raises(InputError) as info:
        read_text(str(path))
    (d,) = info.value.diagnostics
    assert d.code == "E-FILE-BINARY" and f"iconv -f {name} -t UTF-8" in d.hint


def test_a_binary_file_gets_no_encoding_hint(tmp_path: Path) -> None:
    path = tmp_path / "site.yaml"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(InputError) as info:
        read_text(str(path))
    assert info.value.diagnostics[0].hint == ""
