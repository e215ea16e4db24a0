"""JSON as the standard defines it, for the files lnetgen reads back (plans and manifests).

Python's ``json`` accepts two things a hand-edited or damaged file may hold and lnetgen must not
act on: an object with the same key twice (the last one silently wins, so the value a reader
sees in an editor may not be the one applied), and ``NaN``/``Infinity``, which are not JSON and
would be written back as invalid JSON.  :func:`loads` refuses both with ``ValueError`` naming
the key or constant; the inventory's YAML reader refuses duplicate keys the same way.
"""

from __future__ import annotations

import json
from typing import Any


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"key {key!r:.80} appears twice in one object")
        obj[key] = value
    return obj


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads(data: str | bytes) -> Any:
    """The JSON document in ``data``; ``ValueError`` (or ``RecursionError`` for a document
    nested too deeply) when it is not JSON, repeats a key in an object or holds
    ``NaN``/``Infinity``."""
    return json.loads(data, object_pairs_hook=_pairs, parse_constant=_constant)
