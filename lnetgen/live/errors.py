"""Errors of the live readers and how they become diagnostics.

Readers raise ``EntryError`` with a line relative to the text they parse; whoever knows the
file turns it into a ``LiveParseError`` carrying a located ``Diagnostic``.  ``decode`` refuses
bytes that are not UTF-8 at their line; ``shown`` and ``clip`` make file names and manifest
fields safe to print in a message.
"""

from __future__ import annotations

from lnetgen.diagnostics import Diagnostic, InputError


class LiveParseError(Exception):
    """A dump that cannot be read; ``diagnostic`` names the file, line and problem."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.format())
        self.diagnostic = diagnostic


class EntryError(Exception):
    """A problem at ``line`` (relative to the text being parsed); ``path`` is where in the
    document (``$.route[3].hop``), ``$`` when no part of it is known (a syntax error)."""

    def __init__(
        self, line: int, message: str, col: int = 0, path: str = "$", first: int = 0
    ) -> None:
        super().__init__(message)
        self.line = line
        self.col = col
        self.text = message
        self.path = path
        self.first = first  # a line the message refers to ("first at line N"), or 0

    @property
    def message(self) -> str:
        """The message, with the line it refers to (kept relative like ``line``)."""
        return f"{self.text} (first at line {self.first})" if self.first else self.text

    def shift(self, lines: int) -> None:
        """Count the lines from ``lines`` lines further up (the text parsed was a part)."""
        if self.line:
            self.line += lines
        if self.first:
            self.first += lines

    def under(self, path: str) -> EntryError:
        """This error, placed at ``path`` unless a deeper place is already known."""
        if self.path == "$":
            self.path = path
        return self


def decode(data: bytes) -> str:
    """``data`` as UTF-8 text; ``EntryError`` at the line of the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EntryError(data[: exc.start].count(b"\n") + 1, "not valid UTF-8") from None


#: Longest message about one dump: readers quote the value they refuse, and a dump may hold a
#: value of megabytes (a 1 MB ``net:`` name was printed whole, once per host).
MAX_MESSAGE = 400


def bounded(message: str) -> str:
    """``message`` cut in its middle to at most about ``MAX_MESSAGE`` characters, so that its
    start (what is wrong) and its end (what was expected) stay."""
    if len(message) <= MAX_MESSAGE:
        return message
    head, tail = MAX_MESSAGE - 80, 80
    cut = len(message) - head - tail
    return f"{message[:head]} ...[{cut} characters left out]... {message[-tail:]}"


def diag(
    file: str,
    line: int,
    col: int,
    message: str,
    code: str = "E-LIVE-PARSE",
    host: str = "",
    path: str = "$",
) -> Diagnostic:
    """An error about one dump at ``path`` in it, its message led by the host when one is
    known and cut to about ``MAX_MESSAGE`` characters."""
    prefix = f"host {host}: " if host else ""
    return Diagnostic(file, line, col, "error", code, bounded(path), bounded(prefix + message))


def path_error(path: str, message: str) -> InputError:
    """The live PATH itself (or a generated tree's manifest) cannot be used."""
    return InputError([Diagnostic(path, 0, 0, "error", "E-LIVE-PATH", "$", message)])


def shown(text: str) -> str:
    """``text`` fit to print: control characters, undecodable bytes and other unprintable
    characters escaped (a file name or a manifest may hold any of them)."""
    return text if text.isprintable() else ascii(text)[1:-1]


def clip(text: str, limit: int = 100) -> str:
    """``shown(text)``, cut to ``limit`` characters."""
    text = shown(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
