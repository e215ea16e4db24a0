"""Standard output and standard error that cannot be written: one line and exit, no traceback.

``lnetgen schema > /dev/full`` ended in an ``OSError`` traceback with exit 1 (the code of a
finding), and ``lnetgen schema | head -c1`` exited 1 too.  The ``lnetgen`` group
(``lnetgen.cli.common.Lnetgen``) installs ``guard_streams`` on the real command line, so every
command ends the same way:

* a write to **stdout** that fails (a full disk or ``/dev/full``, an I/O error, a file over
  its size limit) prints ``lnetgen: error[E-OUTPUT] <stdout>: cannot write: <reason>`` on
  stderr and exits **2**, an output error;
* a **closed pipe** (``lnetgen schema | head -c1``: ``EPIPE`` on stdout or stderr) exits
  **141** without a word, as a C tool killed by ``SIGPIPE`` does (128 + 13; the shell shows
  the same for ``yes | head -1``), like 130 for Ctrl-C and 143 for ``kill``: the reader has
  gone and wants nothing more, and ``set -o pipefail`` still sees that the output was cut;
* stderr that fails otherwise (``2>/dev/full``) exits 2 without a word: there is nowhere left
  to say it.

The process is not killed by the signal itself: the error unwinds like any other exit, so a
command writing an output tree still removes its temporary tree and its lock.

Long texts are written in pieces of ``CHUNK`` characters: the interpreter loses the ``EPIPE``
of a single large write that the pipe took only in part (``solve --format json | head -c1`` on
Spider's 5.7 MB nearest-neighbor plan exited 0, its output silently cut).
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any, NoReturn

#: Exit status after a closed pipe: 128 + SIGPIPE, what a process killed by it reports.
EXIT_PIPE = 128 + 13
#: Exit status after any other failed write to stdout or stderr (an output error).
EXIT_OUTPUT = 2
#: The longest text passed to the stream in one write (the size of its buffer).
CHUNK = 1 << 13


class OutputError(Exception):
    """A write to stdout or stderr failed.  Not an ``OSError``: click turns an ``EPIPE``
    ``OSError`` into a silent exit 1, the code of a finding."""

    def __init__(self, stream: str, cause: OSError) -> None:
        super().__init__(f"{stream}: {cause.strerror or cause}")
        self.stream = stream
        self.cause = cause


class _Guarded:
    """``sys.stdout`` or ``sys.stderr`` as it was, except that an ``OSError`` of ``write``
    or ``flush`` is an ``OutputError`` naming the stream (everything else is passed on)."""

    def __init__(self, wrapped: Any, name: str) -> None:
        self.wrapped = wrapped
        self.name = name

    def write(self, text: Any) -> int:
        try:
            if len(text) <= CHUNK:
                return int(self.wrapped.write(text))
            for at in range(0, len(text), CHUNK):
                self.wrapped.write(text[at : at + CHUNK])
            return len(text)
        except OSError as exc:
            raise OutputError(self.name, exc) from None

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except OSError as exc:
            raise OutputError(self.name, exc) from None

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.wrapped, attr)


def guard_streams() -> None:
    """Make failed writes to ``sys.stdout`` and ``sys.stderr`` ``OutputError`` (once)."""
    if sys.stdout is not None and not isinstance(sys.stdout, _Guarded):
        sys.stdout = _Guarded(sys.stdout, "<stdout>")
    if sys.stderr is not None and not isinstance(sys.stderr, _Guarded):
        sys.stderr = _Guarded(sys.stderr, "<stderr>")


def flush_streams() -> None:
    """Write what is still buffered (``OutputError`` when that fails), so that a failure is
    reported here rather than by the interpreter on its way out."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()


def _silence(fd: int) -> None:
    """Point ``fd`` at /dev/null: the interpreter flushes stdout and stderr on exit and would
    report the same failure again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(null, fd)
    except OSError:
        pass
    finally:
        os.close(null)


def output_failed(exc: OutputError) -> NoReturn:
    """Report ``exc`` (see the module docstring) and exit 141 or 2."""
    _silence(1 if exc.stream == "<stdout>" else 2)
    if exc.cause.errno == errno.EPIPE:
        sys.exit(EXIT_PIPE)
    if exc.stream == "<stdout>":
        reason = exc.cause.strerror or str(exc.cause)
        try:
            sys.stderr.write(f"lnetgen: error[E-OUTPUT] <stdout>: cannot write: {reason}\n")
            sys.stderr.flush()
        except (OutputError, OSError):
            _silence(2)
    sys.exit(EXIT_OUTPUT)


__all__ = ["EXIT_OUTPUT", "EXIT_PIPE", "OutputError", "flush_streams", "guard_streams"]
