"""Where in a JSON text a value is: line and column for diagnostics about lnetgen's own JSON
files (plans, a generated tree's manifest).

Python's ``json`` parser keeps no positions, so a diagnostic about a plan's value knew its
JSON path (``$.routers[3].nid``) but not its line.  This module reads the text again, only
when there is something to report.  :func:`locate` descends the path: in each object or array
it reads the keys and skips the values before the one wanted with the standard decoder (at C
speed: 0.17 s at worst on Blue Waters' 5.3 MB plan).  :func:`repeated_key` and
:func:`first_token` walk every token, in Python, for what ``json.loads`` refused without a
position (a key named twice, ``NaN``).  Lines and columns are 1-based, columns in characters,
as ``json.JSONDecodeError`` counts them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from lnetgen.diagnostics import Diagnostic

#: A string, a structural character, or a run of anything else (a number, true, false, null).
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)
#: The largest text :func:`repeated_key` and :func:`first_token` scan (about 20 s): they walk
#: every token in Python; above it the error is reported without a line.
MAX_SCAN = 64 << 20
#: One step of a path as :func:`lnetgen.diagnostics.json_path` writes it.
_STEP = re.compile(r"\.([^.\[]*)|\[(\d+)\]")


@dataclass(frozen=True)
class Place:
    """A position in the text: ``line`` and ``col`` (1-based) and the value's path."""

    line: int
    col: int
    path: tuple[str | int, ...]


def line_col(text: str, pos: int) -> tuple[int, int]:
    """The 1-based line and column of character ``pos`` of ``text``."""
    return text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)


def _key(raw: str) -> str:
    if "\\" not in raw:
        return raw[1:-1]
    try:
        return str(json.loads(raw))
    except ValueError:
        return raw[1:-1]


class _Frame:
    __slots__ = ("is_object", "keys", "step", "want_key")

    def __init__(self, is_object: bool) -> None:
        self.is_object = is_object
        self.step: str | int | None = None if is_object else 0
        self.keys: set[str] = set()
        self.want_key = is_object


def _walk(text: str) -> Iterator[tuple[str, str, int, list[_Frame], bool]]:
    """(kind, token, position, stack, repeated) for each value and key of ``text``: kind
    ``value`` at the first token of a value, ``key`` at an object's key (``repeated`` when the
    object named it before).  The stack describes the path of the value or key."""
    stack: list[_Frame] = []
    for m in _TOKEN.finditer(text):
        tok, pos = m.group(), m.start()
        top = stack[-1] if stack else None
        if tok == ":":
            continue
        if tok == ",":
            if top is not None:
                if top.is_object:
                    top.want_key = True
                else:
                    assert isinstance(top.step, int)
                    top.step += 1
            continue
        if tok in "}]":
            if stack:
                stack.pop()
            continue
        if top is not None and top.want_key and tok.startswith('"'):
            key = _key(tok)
            repeated = key in top.keys
            top.keys.add(key)
            top.step, top.want_key = key, False
            yield "key", tok, pos, stack, repeated
            continue
        yield "value", tok, pos, stack, False
        if tok in "{[":
            stack.append(_Frame(tok == "{"))


def _path(stack: list[_Frame]) -> tuple[str | int, ...]:
    return tuple(f.step for f in stack if f.step is not None)


def parse_path(path: str) -> tuple[str | int, ...] | None:
    """``$.routers[3].nid`` -> ``("routers", 3, "nid")``; None when ``path`` is not one
    :func:`lnetgen.diagnostics.json_path` writes."""
    if not path.startswith("$"):
        return None
    steps: list[str | int] = []
    end = 1
    for m in _STEP.finditer(path, 1):
        if m.start() != end:
            return None
        steps.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        end = m.end()
    return tuple(steps) if end == len(path) else None


_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
#: The standard decoder's string reader (C): a string starting after its quote -> (text, end).
_SCANSTRING: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")  # noqa: B009


def _skip(text: str, pos: int) -> int:
    m = _SPACE.match(text, pos)
    assert m is not None
    return m.end()


def _child(text: str, pos: int, step: str | int) -> int | None:
    """Where the value of key or index ``step`` of the object or array starting at ``pos``
    starts; None when it has no such key or item.  The values before it are skipped by the
    standard decoder, at its speed."""
    opening = text[pos]
    if (opening == "{") != isinstance(step, str) or opening not in "{[":
        return None
    pos, index = _skip(text, pos + 1), 0
    while pos < len(text) and text[pos] not in "}]":
        if opening == "{":
            key, pos = _SCANSTRING(text, pos + 1)
            pos = _skip(text, _skip(text, pos) + 1)  # past the colon
            if key == step:
                return pos
        elif index == step:
            return pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
        index += 1
    return None


def locate(text: str, path: str) -> tuple[int, int]:
    """The line and column where the value at ``path`` (``$.routers[3].nid``) starts in
    ``text``; where the nearest enclosing value starts when the text lacks that key or item
    (a key that should be there); ``(1, 1)`` for ``$``; ``(0, 0)`` when the path is not one
    lnetgen writes (e.g. a key holding a dot) or the text is not JSON."""
    want = parse_path(path)
    if want is None:
        return 0, 0
    try:
        pos = _skip(text, 0)
        if pos >= len(text):
            return 0, 0
        for step in want:
            found = _child(text, pos, step)
            if found is None:
                break
            pos = found
    except (ValueError, IndexError, RecursionError):
        return 0, 0
    return line_col(text, pos)


def placed(diags: list[Diagnostic], file: str, text: str) -> list[Diagnostic]:
    """``diags``, each about a value of ``file`` (whose text is ``text``) at line 0 given the
    line and column where its JSON path's value is written; the others as they are."""
    out = []
    for d in diags:
        if d.file == file and not d.line and d.path != "$":
            line, col = locate(text, d.path)
            d = replace(d, line=line, col=col)
        out.append(d)
    return out


def repeated_key(text: str) -> Place | None:
    """The first key that an object of ``text`` names twice, at its second naming; None when
    no object repeats a key (or the text is longer than ``MAX_SCAN``)."""
    if len(text) > MAX_SCAN:
        return None
    for kind, _, pos, stack, repeated in _walk(text):
        if kind == "key" and repeated:
            return Place(*line_col(text, pos), _path(stack))
    return None


def first_token(text: str, tokens: frozenset[str]) -> Place | None:
    """Where the first value written as one of ``tokens`` (``NaN``) is; None if none is (or
    the text is longer than ``MAX_SCAN``)."""
    if len(text) > MAX_SCAN:
        return None
    for kind, tok, pos, stack, _ in _walk(text):
        if kind == "value" and tok in tokens:
            return Place(*line_col(text, pos), _path(stack))
    return None
