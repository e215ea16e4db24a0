"""Progress of long library calls.  Library code never prints: a caller passes a ``Progress``
(what is being done, how many steps) and the library calls the ``Tick`` it returns once per
step.  ``lnetgen.cli`` draws them on stderr; everything else passes nothing (``NO_PROGRESS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeVar

T = TypeVar("T")

#: Advance by one step.
Tick = Callable[[], None]


class Progress(Protocol):
    def __call__(self, what: str, total: int) -> Tick:
        """Start a stage of ``total`` steps (0: not known ahead); the returned tick advances
        it by one."""
        ...  # pragma: no cover - a protocol


def _nothing() -> None:
    return None


def no_progress(what: str, total: int) -> Tick:
    """A ``Progress`` that shows nothing."""
    return _nothing


NO_PROGRESS: Progress = no_progress


def counted(items: Iterable[T], tick: Tick) -> Iterator[T]:
    """``items``, ticking once after each."""
    for item in items:
        yield item
        tick()
