"""What the kernel fixes for ``routes=`` and ``networks=``, shared by their parsers and producers.

The limits (LNet's text buffers, Linux's 1024-byte string module parameter), the bounds of the
kernel's ``sscanf`` conversions, its white space, and the errors for strings it refuses.
"""

from __future__ import annotations

import re

#: Linux refuses a string module parameter longer than this (``kernel/params.c``).
MODULE_PARAM_MAX = 1024
#: ``LNET_MAX_TEXTBUF_NOB``: all route text buffers alive at once.
TEXTBUF_BUDGET = 64 << 10
#: ``LNET_SINGLE_TEXTBUF_NOB``: one text buffer (statement, token or expansion).
TEXTBUF_SINGLE_MAX = 4 << 10
#: ``offsetof(struct lnet_text_buf, ltb_text)`` on 64-bit kernels (list_head + int).
TEXTBUF_HEADER = 20
#: ``networks=`` longer than this is refused ("Can't parse networks: string too long").
NETWORKS_MAX = 4 << 10

INT_MAX = 2**31 - 1  # kernel sscanf("%d") silently wraps beyond this
U32_MAX = 2**32 - 1  # kernel sscanf("%u") silently wraps beyond this
SPACE = " \t\n\v\f\r"  # C isspace() in the "C" locale
DIGITS = re.compile(r"[0-9]+")


class RouteSyntaxError(ValueError):
    """A ``routes=`` string the kernel would refuse; ``offset`` locates the faulty fragment."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message, offset)
        self.message = message
        self.offset = offset

    def __str__(self) -> str:
        return f"{self.message} (at offset {self.offset})"

    def caret(self, text: str) -> str:
        """Two lines: ``text`` with tabs/newlines shown as spaces, and a ``^`` under the fault."""
        shown = "".join(" " if ch in SPACE else ch for ch in text)
        return f"{shown}\n{' ' * self.offset}^"


class RouteBudgetError(RouteSyntaxError):
    """The kernel would run out of route text buffers (``Too many text buffers``)."""


class NetworksSyntaxError(RouteSyntaxError):
    """A ``networks=`` string the kernel would refuse (or silently misread)."""


def param_fits(value: str) -> bool:
    """Whether Linux accepts ``value`` as a string module parameter (at most 1024 bytes)."""
    return len(value.encode()) <= MODULE_PARAM_MAX
