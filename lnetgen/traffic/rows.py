"""Route rows and their evaluation: the routes of many tables as sorted integer arrays, and per
(sender, destination net) pair the best priority alive on paper, the best alive now, and the
rows that carry traffic.

LNet round-robins over the routes of one priority and only uses a worse priority when none of
the better one is alive, so the rows that carry traffic are the live ones at the best live
priority.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lnetgen.traffic.settings import BoolArray, IntArray

#: The priority of a pair without any route (above every real one).
NO_PRIO = np.int64(2**62)


@dataclass(frozen=True, eq=False)
class Rows:
    """Route rows sorted by ``key`` (a dense index of the (sender, destination net) pair)."""

    key: IntArray
    router: IntArray  # -1: gateway is no router
    prio: IntArray
    ok: BoolArray  # alive on paper


def make_rows(keys: IntArray, rtrs: IntArray, prios: IntArray, reasons: IntArray) -> Rows:
    """Rows from columns collected in any order; a row is alive on paper when its dead reason
    is 0."""
    order = np.argsort(keys, kind="stable")
    return Rows(keys[order], rtrs[order], prios[order], (reasons == 0)[order])


def group_min(key: IntArray, val: IntArray, nkeys: int, mask: BoolArray) -> IntArray:
    """Per key, the least ``val`` of the rows in ``mask`` (``NO_PRIO`` for a key with none)."""
    out = np.full(nkeys, NO_PRIO, dtype=np.int64)
    if mask.any():
        np.minimum.at(out, key[mask], val[mask])
    return out


@dataclass(frozen=True, eq=False)
class State:
    planned: IntArray  # best priority alive on paper, per key
    planned_n: IntArray  # gateways at that priority
    live: IntArray  # best priority alive now
    live_n: IntArray
    active: BoolArray  # per row: carries traffic now


def evaluate(rows: Rows, nkeys: int, failed: BoolArray) -> State:
    """The pairs' planned and live priorities with the routers in ``failed`` down."""
    alive = rows.ok & ~failed[np.maximum(rows.router, 0)]
    planned = group_min(rows.key, rows.prio, nkeys, rows.ok)
    live = group_min(rows.key, rows.prio, nkeys, alive)
    at_planned = rows.ok & (rows.prio == planned[rows.key])
    active = alive & (rows.prio == live[rows.key])
    return State(
        planned,
        np.bincount(rows.key[at_planned], minlength=nkeys),
        live,
        np.bincount(rows.key[active], minlength=nkeys),
        active,
    )
