"""How a diagnostic quotes the user's values back: shortened, described, or matched to a choice.

A 10 kB name in a message helps nobody, so every value shown is cut at ``MAX_SHOWN`` characters;
a misspelt word is answered with the closest allowed one.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from lnetgen.diagnostics import MAX_SHOWN, clip, show


def describe(value: object) -> str:
    """What a loaded value is, in words: "the number 8", "a list", "no value (null)"."""
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if value is None:
        return "no value (null)"
    if isinstance(value, int | float):
        return f"the number {clip(repr(value))}"
    if isinstance(value, str):
        return f"the text {show(value)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """The closest of ``choices`` as a question, or all of them when none is close."""
    options = sorted(choices)
    close = difflib.get_close_matches(word[: MAX_SHOWN * 2], options, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return "allowed: " + ", ".join(options)


# clip and show live in lnetgen.diagnostics, below every reader (rates and the YAML reader quote
# values back too); the inventory's checks take them from here with the rest
__all__ = ["MAX_SHOWN", "clip", "describe", "did_you_mean", "show"]
