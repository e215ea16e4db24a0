"""YAML 1.1 number traps: unquoted ``010`` is octal 8 and ``1:30`` is base-60 90.

The loader follows YAML 1.1 like every PyYAML user, so such a value may pass the schema as a
number nobody meant.  ``number_traps`` reports those the schema accepted (E-YAML-NUMBER);
``read_as`` names the trap in a type error the schema did report.
"""

from __future__ import annotations

import re
from typing import Any

from lnetgen.diagnostics import Diagnostic
from lnetgen.inventory.messages import describe
from lnetgen.yamlsrc import Path, Source

_OCTAL = re.compile(r"[+-]?0[0-7_]+")
_SEXAGESIMAL = re.compile(r"[+-]?[0-9][0-9_]*(:[0-5]?[0-9])+")


def read_as(text: str, value: object) -> str:
    """How YAML 1.1 read the plain scalar ``text``: "the octal number 8", "the boolean true"..."""
    if isinstance(value, int) and not isinstance(value, bool):
        digits = text.lstrip("+-")
        if re.fullmatch(r"0[0-7_]+", digits):
            return f"the octal number {value}"
        if ":" in digits:
            return f"the base-60 number {value}"
    return describe(value)


def number_traps(src: Source, skip: set[Path]) -> list[tuple[Path, Diagnostic]]:
    """Unquoted numbers the schema accepted but YAML 1.1 read as octal or base 60."""
    out: list[tuple[Path, Diagnostic]] = []
    for path, (text, style) in sorted(src.raw.items(), key=lambda kv: src.where(kv[0])):
        if style is not None or path in skip:
            continue
        if _OCTAL.fullmatch(text) or _SEXAGESIMAL.fullmatch(text):
            value = _lookup(src.data, path)
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            digits = text.replace("_", "").lstrip("+")
            if ":" in digits:
                how, hint = "base-60", "write the number you mean as plain digits"
            elif int(digits, 10) == value:
                continue  # 00, 07: the same value either way
            else:
                decimal = digits.lstrip("-").lstrip("0") or "0"
                how, hint = "octal", f"write {decimal} without the leading zero"
            out.append(
                (
                    path,
                    src.diag(
                        path,
                        "E-YAML-NUMBER",
                        f"YAML 1.1 reads the unquoted {text} as the {how} number {value}",
                        hint=hint,
                    ),
                )
            )
    return out


def _lookup(data: Any, path: Path) -> Any:
    for p in path:
        try:
            data = data[p]
        except (KeyError, IndexError, TypeError):
            return None
    return data
