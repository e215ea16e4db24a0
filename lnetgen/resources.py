"""Locate shipped data (schemas/, templates/) in an installed wheel or a source checkout."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """``lnetgen/_data/<name>`` in a wheel, else ``<repo>/<name>`` in a checkout."""
    installed = _PKG / "_data" / name
    if installed.is_dir():
        return installed
    checkout = _PKG.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"lnetgen data directory {name!r} is missing from this installation")


@cache
def schema(name: str) -> dict[str, Any]:
    """A shipped JSON Schema by file name (``site.schema.json``)."""
    with open(data_dir("schemas") / name, encoding="utf-8") as fh:
        loaded: dict[str, Any] = json.load(fh)
    return loaded


def schema_text(name: str) -> str:
    return (data_dir("schemas") / name).read_text(encoding="utf-8")
