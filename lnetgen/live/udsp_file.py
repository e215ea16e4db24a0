"""Reading the UDSP scripts of a generated tree (``udsp/<class>.sh``, ``lnetgen.udsp.script``):
the rules they add, each with its line, for ``diff`` and ``verify`` to take as the hosts' rules
(the lnetctl files carry none: ``lnetgen.udsp``)."""

from __future__ import annotations

from lnetgen.live.errors import EntryError, LiveParseError, decode, diag, shown
from lnetgen.live.files import read_bytes
from lnetgen.udsp import Rule, ScriptError, parse_script

#: The manifest format of a UDSP script (``lnetgen.emit.lnetctl.UDSP_FORMAT``).
UDSP_FORMAT = "udsp"


def read_rules(path: str, root: str = "") -> tuple[Rule, ...]:
    """The rules the script ``path`` adds (no link out of ``root`` followed).  Raises
    ``LiveParseError`` (``E-LIVE-PARSE`` at the line; ``E-LIVE-READ``, ``E-LIVE-SIZE``,
    ``E-LIVE-LINK`` when it cannot be read)."""
    try:
        data = read_bytes(path, root)
    except OSError as exc:
        why = f"cannot read: {exc.strerror or exc}"
        raise LiveParseError(diag(shown(path), 0, 0, why, "E-LIVE-READ")) from None
    try:
        return parse_script(decode(data))
    except EntryError as exc:
        raise LiveParseError(diag(shown(path), exc.line, 0, exc.message)) from None
    except ScriptError as exc:
        raise LiveParseError(diag(shown(path), exc.line, 0, f"udsp script: {exc}")) from None


__all__ = ["UDSP_FORMAT", "read_rules"]
