"""JSON as the standard defines it, for the files lnetgen reads back (plans and manifests).

Python's ``json`` accepts two things a hand-edited or damaged file may hold and lnetgen must not
act on: an object with the same key twice (the last one silently wins, so the value a reader
sees in an editor may not be the one applied), and ``NaN``/``Infinity``, which are not JSON and
would be written back as invalid JSON.  :func:`loads` refuses both with :class:`JSONError` (a
``ValueError``) naming the key or constant, with the line, column and path of the second naming
of the key; the inventory's YAML reader refuses duplicate keys the same way.  Text that is not
JSON at all is a :class:`JSONError` at the line and column ``json`` gives.
"""

from __future__ import annotations

import json
from typing import Any

from lnetgen import jsonloc
from lnetgen.diagnostics import json_path


class JSONError(ValueError):
    """Why a text is not JSON lnetgen reads (``msg``), and where: ``line`` and ``col``
    (1-based; 0 when unknown) and the document path of what is wrong (``$`` when the text is
    not JSON).  ``str()`` gives the message with its line and column, for a caller that
    reports no position of its own."""

    def __init__(self, msg: str, line: int = 0, col: int = 0, path: str = "$") -> None:
        where = f" (line {line} column {col})" if line else ""
        super().__init__(msg + where)
        self.msg, self.line, self.col, self.path = msg, line, col, path


class _Repeated(ValueError):
    pass


class _Constant(ValueError):
    pass


_CONSTANTS = frozenset({"NaN", "Infinity", "-Infinity"})


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _Repeated(f"key {key!r:.80} appears twice in one object")
        obj[key] = value
    return obj


def _constant(name: str) -> Any:
    raise _Constant(f"{name} is not a JSON number")


def loads(data: str | bytes) -> Any:
    """The JSON document in ``data``; :class:`JSONError` (or ``RecursionError`` for a document
    nested too deeply, ``UnicodeDecodeError`` for bytes that are not UTF-8) when it is not JSON,
    repeats a key in an object or holds ``NaN``/``Infinity``."""
    try:
        return json.loads(data, object_pairs_hook=_pairs, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise JSONError(exc.msg, exc.lineno, exc.colno) from None
    except (_Repeated, _Constant) as exc:
        text = data if isinstance(data, str) else data.decode("utf-8")
        if isinstance(exc, _Repeated):
            place = jsonloc.repeated_key(text)
        else:
            place = jsonloc.first_token(text, _CONSTANTS)
        if place is None:  # a text too long to scan for the place
            raise JSONError(str(exc)) from None
        raise JSONError(str(exc), place.line, place.col, json_path(place.path)) from None
