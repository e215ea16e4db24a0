"""What the benchmark scripts share: the best of several timed runs, and the process's peak
memory.  Imported by the scripts beside it (``python bench/<script>.py`` puts this directory
first on ``sys.path``)."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best(repeat: int, fn: Callable[[], T]) -> tuple[float, T]:
    """The shortest wall time of ``repeat`` runs of ``fn`` (seconds), and its last result."""
    times = []
    out: T | None = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    assert out is not None
    return min(times), out


def peak_rss_line() -> str:
    """``peak RSS <n> MiB`` of this process so far (Linux reports KiB)."""
    return f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
