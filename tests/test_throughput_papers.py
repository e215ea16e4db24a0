"""The papers' measured results the model reproduces (lnetgen.throughput.papers, the table in
docs/throughput.md), each pinned within the tolerance fixed before the model ran: ±30 % on
absolute GB/s, ±25 % on the ratio between two layouts, rankings exact.

The cases marked not reproduced are in the table with their prediction and the reason, and
are not pinned here.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from lnetgen.throughput.papers import ABSOLUTE, CASES, RATIOS, Outcome, Ratio, ratio, run

SITES = str(Path(__file__).resolve().parent.parent / "sites")
PINNED = [c for c in CASES if c.reproduced]


@cache
def outcome(key: str) -> Outcome:
    return run(next(c for c in CASES if c.key == key), SITES)


def _needs_opensm(key: str) -> None:
    from lnetgen.fabric.simulate import missing_tools

    case = next(c for c in CASES if c.key == key)
    if case.opensm and missing_tools():
        pytest.skip(f"OpenSM simulation needs {', '.join(missing_tools())} (.ci/run installs them)")


@pytest.mark.parametrize("key", [c.key for c in PINNED])
def test_reproduced_within_tolerance(key: str) -> None:
    _needs_opensm(key)
    out = outcome(key)
    assert out.error is not None, "no prediction: a rate on the path is missing"
    assert abs(out.error) <= ABSOLUTE, (
        f"{key}: predicted {out.predicted_gb_s:.1f} GB/s, measured {out.case.measured_gb_s} GB/s"
    )


def test_unreproduced_cases_say_why() -> None:
    for c in CASES:
        assert c.reproduced or len(c.why_not) > 40, c.key


def test_wolf_fix_ratio() -> None:
    """Seed 002: contiguous jobs after the fix over before (55 / 17), from OpenSM's simulated
    forwarding tables.  (Non-contiguous over contiguous before the fix ranks right but is
    predicted 2.83 against 2.21 measured: outside the ratio tolerance, in the table only.)"""
    a, b = ("wolf-contiguous-after", "wolf-contiguous-before")
    _needs_opensm(a)
    q = ratio(outcome(a), outcome(b))
    assert q.ranks_right and q.within, q


def test_ratio_projection_over_round_robin_placed() -> None:
    """Seed 000: placed projection 113 GB/s over placed round-robin 83 GB/s (1.36)."""
    q = ratio(outcome("spider-projection-placed"), outcome("spider-rr-placed"))
    assert q.ranks_right and q.within, q


def test_ratio_bw_file_per_process_over_shared_file() -> None:
    """Seed 001: 1,137 GB/s file per process over 771 GB/s in ten shared files (1.47)."""
    q = ratio(outcome("bw-fpp"), outcome("bw-shared"))
    assert q.ranks_right and q.within, q


@pytest.mark.parametrize(
    ("measured", "predicted", "right"),
    [(1.36, 1.07, True), (1.91, 0.70, False), (0.69, 1.0, False), (1.01, 1.0, True),
     (1.01, 0.88, False), (2.21, 2.83, True)],
)  # fmt: skip
def test_a_tie_ranks_right_only_against_a_tie(
    measured: float, predicted: float, right: bool
) -> None:
    """A predicted tie against a measured 30 % difference (the block test) does not agree."""
    assert Ratio(measured, predicted).ranks_right is right


def test_every_ratio_names_two_cases() -> None:
    keys = {c.key for c in CASES}
    for a, b in RATIOS:
        assert a in keys and b in keys
