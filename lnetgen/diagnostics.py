"""Diagnostics: every user-facing problem as data (severity, stable code, location, message).

Findings are values, not exceptions.  ``InputError`` carries a list of diagnostics when a stage
cannot go on (the CLI prints them and exits 1 or 2); anything else that escapes is a bug.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Literal

#: ``info`` is a note, never a problem: e.g. validate's dry solve saying which other
#: strategies apply.  Only errors change an exit status.
Severity = Literal["error", "warning", "info"]


def printable(text: str, keep: str = "") -> str:
    """``text`` fit for a terminal: each character ``str.isprintable`` refuses (C0 and C1
    controls, DEL, format characters such as the bidi overrides U+202A-U+202E and U+2066-U+2069,
    line and paragraph separators, lone surrogates), but those of ``keep``, written as a Python
    string literal writes it (``\\x1b``, ``\\r``, ``\\u202e``), as ``repr`` does in quoted values;
    printable text, of any script, is returned as it is."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in text)


#: Longest user value quoted back in a message; longer ones are cut (a 10 kB name helps nobody).
MAX_SHOWN = 60


def clip(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` cut at ``limit`` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def show(value: object) -> str:
    """``repr`` of a user value, shortened when long."""
    if isinstance(value, str) and len(value) > MAX_SHOWN:
        return f"{value[:MAX_SHOWN]!r}... ({len(value)} characters)"
    return clip(repr(value))


#: What a message or hint may break lines with (a caret under a quoted route string).
_LINES = "\n\t"


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding, located in a file (line/col 1-based) and a JSON path (``$.routers[3].nid``)."""

    file: str = ""
    line: int = 0
    col: int = 0
    severity: Severity = "error"
    code: str = "E-INTERNAL"
    path: str = "$"
    message: str = ""
    hint: str = field(default="", compare=False)

    def format(self) -> str:
        """``file:line:col: severity[code] $.path: message`` (terraform/yamllint style).

        A diagnostic without a file is about the command line: ``lnetgen: error[E-USAGE]
        --option: message`` (its ``path`` names the option or argument; ``$`` is left out).

        The file, the path (a key of the document can hold any character) and the message are
        made ``printable``: a control character or bidi override there reaches no terminal
        (``as_dict`` keeps them as they are, for JSON to escape).  Only the message and hint keep
        their line breaks and tabs (``_LINES``)."""
        path = printable(self.path)
        message = printable(self.message, keep=_LINES)
        if self.file:
            where = printable(self.file)
            if self.line:
                where += f":{self.line}:{self.col or 1}"
            text = f"{where}: {self.severity}[{self.code}] {path}: {message}"
        else:
            option = "" if path == "$" else f"{path}: "
            text = f"lnetgen: {self.severity}[{self.code}] {option}{message}"
        if self.hint:
            text += f" (hint: {printable(self.hint, keep=_LINES)})"
        return text

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class InputError(Exception):
    """Raised when input is unusable; ``diagnostics`` says why and where."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics)
        super().__init__("; ".join(d.format() for d in self.diagnostics[:3]))


class UsageError(InputError):
    """Raised when the command line or the output place is unusable (a refused ``--out``, a
    locked output, an unknown option value): the CLI exits 2, where an invalid inventory
    exits 1."""


def usage(option: str, message: str, code: str = "E-USAGE") -> Diagnostic:
    """A command-line mistake: printed ``lnetgen: error[E-USAGE] OPTION: message``."""
    return Diagnostic("", 0, 0, "error", code, option, message)


def is_usage(diags: Iterable[Diagnostic]) -> bool:
    """Whether the errors are all about the command line (``E-USAGE``, or no file named: an
    unknown OSS, too few free clients): they exit 2, where a located inventory error exits 1."""
    errs = errors(diags)
    return bool(errs) and all(d.code == "E-USAGE" or not d.file for d in errs)


def errors(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diags if d.severity == "error"]


def to_json(diags: Iterable[Diagnostic]) -> str:
    items = [d.as_dict() for d in sorted(diags)]
    return json.dumps(
        {
            "errors": sum(1 for d in items if d["severity"] == "error"),
            "warnings": sum(1 for d in items if d["severity"] == "warning"),
            "infos": sum(1 for d in items if d["severity"] == "info"),
            "diagnostics": items,
        },
        indent=2,
        sort_keys=True,
    )


def json_path(parts: Iterable[str | int]) -> str:
    """``("routers", 3, "nid")`` -> ``$.routers[3].nid``."""
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out
