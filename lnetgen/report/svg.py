"""SVG primitives shared by every picture: the shape dataclasses the template draws, moving and
rounding coordinates, axis ticks, counts per bin, and the short number and name texts in titles.

Shapes are plain frozen data; ``templates/report/svg.html.j2`` turns them into elements.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

#: Width (px) the pictures are laid out for.
PAGE_WIDTH = 1320


@dataclass(frozen=True)
class Rect:
    kind: ClassVar[str] = "rect"
    x: float
    y: float
    w: float
    h: float
    cls: str = ""
    title: str = ""


@dataclass(frozen=True)
class Circle:
    kind: ClassVar[str] = "circle"
    x: float
    y: float
    r: float
    cls: str = ""
    title: str = ""


@dataclass(frozen=True)
class Poly:
    """A closed polygon, ``points`` as ``(x, y)`` pairs."""

    kind: ClassVar[str] = "poly"
    points: tuple[tuple[float, float], ...]
    cls: str = ""
    title: str = ""


@dataclass(frozen=True)
class Line:
    kind: ClassVar[str] = "line"
    x1: float
    y1: float
    x2: float
    y2: float
    cls: str = ""


@dataclass(frozen=True)
class Text:
    kind: ClassVar[str] = "text"
    x: float
    y: float
    text: str
    cls: str = ""
    anchor: str = "start"  # start | middle | end


Shape = Rect | Circle | Poly | Line | Text


@dataclass(frozen=True)
class Svg:
    """One inline picture: size in px, an accessible label, shapes in drawing order."""

    width: float
    height: float
    label: str
    items: tuple[Shape, ...]


# ---------------------------------------------------------------------------- coordinates


def coord(x: float) -> float:
    """A coordinate rounded to 0.1 px (short, deterministic text)."""
    return round(float(x), 1)


def shift(s: Shape, dx: float, dy: float) -> Shape:
    """``s`` moved by ``(dx, dy)``, its new coordinates rounded."""
    if dx == 0 and dy == 0:
        return s
    if isinstance(s, Rect):
        return Rect(coord(s.x + dx), coord(s.y + dy), s.w, s.h, s.cls, s.title)
    if isinstance(s, Circle):
        return Circle(coord(s.x + dx), coord(s.y + dy), s.r, s.cls, s.title)
    if isinstance(s, Poly):
        return Poly(tuple((coord(a + dx), coord(b + dy)) for a, b in s.points), s.cls, s.title)
    if isinstance(s, Line):
        return Line(coord(s.x1 + dx), coord(s.y1 + dy), coord(s.x2 + dx), coord(s.y2 + dy), s.cls)
    return Text(coord(s.x + dx), coord(s.y + dy), s.text, s.cls, s.anchor)


# ---------------------------------------------------------------------------- scales


def _nice_step(span: float, target: int) -> float:
    if span <= 0:
        return 1.0
    raw = span / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return float(m * mag)
    return float(10 * mag)


def ticks(hi: float, target: int = 4) -> list[float]:
    """About ``target`` round tick values from 0 up to ``hi``."""
    step = _nice_step(hi, target)
    n = math.floor(hi / step + 1e-9)
    return [round(i * step, 10) for i in range(n + 1)]


def tick_text(v: float) -> str:
    """A tick value as short text: ``3``, ``2.5``."""
    if abs(v - round(v)) < 1e-9:
        return str(round(v))
    return f"{v:g}"


def counts(values: npt.NDArray[Any], edges: Sequence[float]) -> list[int]:
    """How many ``values`` fall into each bin ``[edges[i], edges[i + 1])``."""
    idx = np.searchsorted(np.asarray(edges[1:-1]), values, side="right")
    return [int(c) for c in np.bincount(idx, minlength=len(edges) - 1)]


# ---------------------------------------------------------------------------- texts


def fmt(x: float, digits: int = 2) -> str:
    """A figure with ``digits`` decimals; "n/a" for an unknown (infinite) one."""
    return f"{x:.{digits}f}" if math.isfinite(x) else "n/a"


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def some(names: Sequence[str], limit: int = 6) -> str:
    """The first ``limit`` names, and how many more there are."""
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"
