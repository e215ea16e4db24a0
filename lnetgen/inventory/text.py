"""Free text: the site's ``description``, the ``source`` of every rate and the ``reason`` of
every ``acknowledge`` entry.

The schema bounds their length but, having no pattern, lets any character through; these
texts go on to places that are no terminal -- ``report`` puts the description into HTML, the
JSON of ``validate`` carries the reasons -- where a NUL, an escape sequence or a bidi override
is garbage or worse.  Each such text is E-SCHEMA at its path: any character ``str.isprintable``
refuses (C0 and C1 controls, DEL, format characters such as U+202E, line and paragraph
separators), except the line break and tab a block scalar writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lnetgen.inventory.context import Context
from lnetgen.inventory.messages import show
from lnetgen.yamlsrc import Path

#: What free text may hold besides printable characters (a ``|`` block writes line breaks).
ALLOWED = "\n\t"


def check_text(ctx: Context) -> None:
    """E-SCHEMA for free text holding a character that does not print."""
    for path, text in _texts(ctx.data):
        bad = next((c for c in text if not c.isprintable() and c not in ALLOWED), None)
        if bad is not None:
            ctx.err(
                path,
                "E-SCHEMA",
                f"{show(text)} holds the character U+{ord(bad):04X}, which does not print "
                "(a control or format character)",
                hint="free text may hold printable characters, line breaks and tabs",
            )


def _texts(data: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    """Every free text of the document, with its path."""
    if isinstance(data.get("description"), str):
        yield ("description",), data["description"]
    yield from _sources(data.get("rates"), ("rates",))
    for i, fabric in _entries(data.get("fabrics")):
        for j, switch in _entries(fabric.get("switches")):
            path: Path = ("fabrics", i, "switches", j, "rates")
            yield from _sources(switch.get("rates"), path)
    for i, entry in _entries(data.get("acknowledge")):
        if isinstance(entry.get("reason"), str):
            yield ("acknowledge", i, "reason"), entry["reason"]


def _sources(rates: object, path: Path) -> Iterator[tuple[Path, str]]:
    if not isinstance(rates, dict):
        return
    for key, entry in rates.items():
        if isinstance(entry, dict) and isinstance(entry.get("source"), str):
            yield (*path, key, "source"), entry["source"]


def _entries(items: object) -> Iterator[tuple[int, dict[str, Any]]]:
    if isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, dict):
                yield i, item
