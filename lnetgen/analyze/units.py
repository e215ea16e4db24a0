"""How a bandwidth (MB/s) is written in analyze, compare and the report: one rule for all three.

* From 1 GB/s (999.5 MB/s, which rounds to it) up: GB/s with one decimal, ``"48.3 GB/s"`` --
  as these figures have always been printed (the documentation quotes them).
* Below: MB/s, whole from 10 MB/s (``"30 MB/s"``, ``"950 MB/s"``), two significant digits
  under 10 (``"2.5 MB/s"``, ``"0.042 MB/s"``).  A figure that is not zero never reads as ``0``
  (it printed ``"0.0 GB/s"`` up to 50 MB/s, like a run that hangs and reports nothing).
* Exactly zero: ``"0 GB/s"`` (what a run that never completes reports); unknown: ``"n/a"``.

Per-rank figures stay in MB/s with one decimal (:func:`mb_s_digits`), more where one would
show a nonzero figure as 0.0.

A count of flows (:func:`flows`) is whole when it is (``"4"``, ``"12"``: a leaf's OSTs) and
otherwise has two decimals like every other figure (``"3.33"``); ``:g`` printed
``"3.33333"``.
"""

from __future__ import annotations

import math

#: From here (MB/s) a figure is written in GB/s: it rounds to at least 1.0 GB/s.
GB_FROM = 999.5


def rate(mb_s: float | None) -> str:
    """``mb_s`` as text by the module's rule (``"n/a"`` for None)."""
    if mb_s is None:
        return "n/a"
    if mb_s == 0:
        return "0 GB/s"
    if not math.isfinite(mb_s) or abs(mb_s) >= GB_FROM:
        return f"{mb_s / 1000:.1f} GB/s"
    if abs(mb_s) >= 9.95:
        return f"{mb_s:.0f} MB/s"
    decimals = 1 - math.floor(math.log10(abs(mb_s)))  # two significant digits
    return f"{mb_s:.{max(decimals, 1)}f} MB/s"


def mb_s_digits(mb_s: float) -> str:
    """A per-rank figure in MB/s as analyze prints it, one decimal (``"714.3"``), but two
    significant digits where one decimal would show a nonzero figure as 0.0 (``"0.042"``)."""
    if mb_s == 0 or not math.isfinite(mb_s) or abs(mb_s) >= 0.05:
        return f"{mb_s:.1f}" if math.isfinite(mb_s) else "n/a"
    return f"{mb_s:.{1 - math.floor(math.log10(abs(mb_s)))}f}"


def same_unit(figures: list[str]) -> str:
    """Figures printed together (``"X / Y"``, each :func:`rate` or another text such as
    ``"n/a"``): ``"48.3 / 50.1 GB/s"`` when none is in MB/s (as always printed), else each
    with its own unit (``"30 MB/s / 1.2 GB/s"``)."""
    if all(not f.endswith(" MB/s") for f in figures):
        return " / ".join(f.removesuffix(" GB/s") for f in figures) + " GB/s"
    return " / ".join(figures)


def flows(x: float) -> str:
    """A count of flows as text: ``"4"`` when it is whole (to two decimals), else two
    decimals, ``"3.33"``; ``"n/a"`` when not finite."""
    if not math.isfinite(x):
        return "n/a"
    text = f"{x:.2f}"
    return text[:-3] if text.endswith(".00") else text
