"""Bracket expansion of ``routes=`` tokens (``lnet_str2tbs_expand``) and its buffer budget.

Expansion is *textual*: the first ``[...]`` of a token is replaced by each item, and the results
are scanned again.  Items are ``a-b``, ``a-b/s`` or literal strings, so ``[tcp,o2ib]``,
``o2ib[1-4]`` and ``10.0.[1-2].[3-4]@o2ib`` all work.  ``[1-10/2]`` is rejected because the
stride must divide ``hi - lo``; a stride of 0 would divide by zero in the kernel.

The kernel parses all route text in buffers drawn from a 64 KiB budget (``LNET_MAX_TEXTBUF_NOB``),
each costing a 20-byte header plus the text and its NUL; a statement that expands to too many
gateways fails the whole parameter (and LNet start-up).  ``Budget`` simulates that accounting.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from lnetgen.routestr.kernel import (
    INT_MAX,
    TEXTBUF_BUDGET,
    TEXTBUF_HEADER,
    TEXTBUF_SINGLE_MAX,
    RouteBudgetError,
    RouteSyntaxError,
)

_RANGE_ITEM = re.compile(r"(-?[0-9]+)-(-?[0-9]+)(?:/(-?[0-9]+))?")
_RANGE_HEAD = re.compile(r"-?[0-9]+--?[0-9]+")


@dataclass
class Text:
    """Text plus, for every character, its offset in the original parameter string."""

    text: str
    origin: list[int]

    def at(self, index: int) -> int:
        if not self.origin:
            return 0
        if index >= len(self.origin):  # just past the end: one after the last character
            return self.origin[-1] + index - len(self.origin) + 1
        return self.origin[max(index, 0)]


def _expand_once(src: Text) -> list[Text] | None:
    """One pass of ``lnet_str2tbs_expand``: ``None`` when there is no ``[``."""
    s = src.text
    lb = s.find("[")
    if lb < 0:
        return None
    rb = s.find("]", lb)
    if rb < 0:
        raise RouteSyntaxError(f"'[' without a closing ']' in {s!r}", src.at(lb))
    head, head_o = s[:lb], src.origin[:lb]
    tail, tail_o = s[rb + 1 :], src.origin[rb + 1 :]
    out: list[Text] = []
    pos = lb + 1
    while True:
        end = pos
        while end < rb and s[end] != ",":
            end += 1
        item = s[pos:end]
        if not item:
            raise RouteSyntaxError(f"empty item in bracket list {s[lb : rb + 1]!r}", src.at(pos))
        values = _range_values(item, src.at(pos))
        if values is None:  # a literal string, substituted as written
            out.append(Text(head + item + tail, head_o + src.origin[pos:end] + tail_o))
        else:
            for v in values:
                num = str(v)
                out.append(Text(head + num + tail, head_o + [src.at(pos)] * len(num) + tail_o))
        if end >= rb:
            return out
        pos = end + 1


def _range_values(item: str, offset: int) -> range | None:
    """``a-b`` / ``a-b/s`` as the kernel's ``sscanf("%d-%d/%d%n")`` sees them, or ``None``.

    ``None`` means the kernel takes the item as a literal string (it does not start with
    ``%d-%d``).  Raises for what the kernel rejects: trailing junk after a range, negative
    numbers, ``hi < lo``, a stride that does not divide ``hi - lo``; also for stride 0 (a
    division by zero in the kernel) and numbers the kernel's ``%d`` would wrap.
    """
    m = _RANGE_HEAD.match(item)
    if m is None:
        return None
    full = _RANGE_ITEM.fullmatch(item)
    if full is None:
        raise RouteSyntaxError(f"junk after the range in bracket item {item!r}", offset)
    lo, hi = int(full.group(1)), int(full.group(2))
    stride = int(full.group(3)) if full.group(3) is not None else 1
    if max(abs(lo), abs(hi), abs(stride)) > INT_MAX:
        raise RouteSyntaxError(
            f"number in range {item!r} exceeds {INT_MAX} (the kernel's %d would wrap it)", offset
        )
    if lo < 0 or hi < 0 or stride < 0:
        raise RouteSyntaxError(f"negative number in range {item!r}", offset)
    if hi < lo:
        raise RouteSyntaxError(f"range {item!r} ends below its start", offset)
    if stride == 0:
        raise RouteSyntaxError(
            f"stride 0 in range {item!r} (the kernel would divide by zero)", offset
        )
    if (hi - lo) % stride != 0:
        raise RouteSyntaxError(
            f"range {item!r}: stride {stride} does not divide {hi}-{lo}={hi - lo} "
            "(the kernel rejects it)",
            offset,
        )
    return range(lo, hi + 1, stride)


def expand_brackets(token: str, limit: int = 100_000) -> list[str]:
    """Expand one token like ``lnet_str2tbs_expand`` does, in the kernel's order.

    ``10.0.[1-2].[3-4]@o2ib`` -> ``['10.0.1.3@o2ib', '10.0.1.4@o2ib', '10.0.2.3@o2ib', ...]``.
    Raises ``RouteSyntaxError`` (offset within ``token``) or ``ValueError`` past ``limit``
    results.
    """
    out: list[str] = []
    for t in expand_iter(Text(token, list(range(len(token)))), None):
        out.append(t.text)
        if len(out) > limit:
            raise ValueError(f"{token!r} expands to more than {limit} strings")
    return out


class Budget:
    """``lnet_tbnob`` bookkeeping: every text buffer costs header + text + NUL."""

    def __init__(self) -> None:
        self.live = 0

    @staticmethod
    def cost(text: str) -> int:
        return TEXTBUF_HEADER + len(text) + 1

    def alloc(self, text: str, offset: int) -> None:
        nob = self.cost(text)
        if nob > TEXTBUF_SINGLE_MAX:
            raise RouteBudgetError(
                f"text of {len(text)} bytes exceeds the kernel's single buffer "
                f"({TEXTBUF_SINGLE_MAX} bytes with header): {text[:40]!r}...",
                offset,
            )
        if self.live + nob > TEXTBUF_BUDGET:
            raise RouteBudgetError(
                f"the kernel would run out of route text buffers ({TEXTBUF_BUDGET} bytes, "
                "'Too many text buffers'): this statement expands to too many nets or "
                "gateways; split it into several statements",
                offset,
            )
        self.live += nob

    def free(self, text: str) -> None:
        self.live -= self.cost(text)


def expand_iter(token: Text, budget: Budget | None) -> Iterator[Text]:
    """Fully expanded strings of ``token`` in kernel (depth-first) order, budget-checked.

    The token's own buffer is assumed allocated by the caller; expanded finals stay allocated.
    """
    stack = [token]
    while stack:
        cur = stack.pop()
        derived = _expand_once(cur)
        if derived is None:
            yield cur
            continue
        if budget is not None:
            for d in derived:
                budget.alloc(d.text, token.at(0))
            budget.free(cur.text)
        stack.extend(reversed(derived))
