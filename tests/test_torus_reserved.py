"""``topology.coordinates.reserved``: a node slot no client takes, so that retiring a router under
the linear rule moves no client (a reviewer retired one router of a 22,600-client torus and the
change plan touched every client numbered after it: 1,147 groups of route changes, where pinning
the positions changed one net)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

from lnetgen.diagnostics import InputError
from lnetgen.inventory import load_site

DEMO = (ROOT / "sites" / "demo.yaml").read_text()
LINEAR = "coordinates: {rule: linear, order: xyz, skip_routers: true}"


def _site(tmp_path: Path, text: str, name: str = "site.yaml"):  # type: ignore[no-untyped-def]
    p = tmp_path / name
    p.write_text(text)
    return load_site(str(p))[0]


def _retired(text: str, router: str) -> str:
    """``text`` without the entry of ``router`` (to the next ``- name:`` of the list)."""
    return re.sub(rf"  - name: {router}\n(?:    .*\n)+", "", text, count=1)


def _coords(site) -> dict[str, tuple[int, ...]]:  # type: ignore[no-untyped-def]
    c = site.clients
    return {n: tuple(int(v) for v in c.coords[i]) for i, n in enumerate(c.names)}


def test_a_retired_routers_slot_kept_reserved_moves_no_client(tmp_path: Path) -> None:
    before = _coords(_site(tmp_path, DEMO, "before.yaml"))
    gone = _retired(DEMO, "rtr05")
    assert gone != DEMO and "rtr05" not in gone.split("routers:")[1].split("servers:")[0]
    shifted = _coords(_site(tmp_path, gone, "shifted.yaml"))
    moved = [n for n in before if shifted[n] != before[n]]
    assert moved, "without the reserved slot the clients after rtr05's slot move"
    kept = gone.replace(LINEAR, LINEAR[:-1] + ", reserved: [[1, 1, 1]]}")
    assert _coords(_site(tmp_path, kept, "kept.yaml")) == before


def test_a_reserved_slot_counts_toward_its_chip_and_must_be_inside(tmp_path: Path) -> None:
    outside = DEMO.replace(LINEAR, LINEAR[:-1] + ", reserved: [[4, 0, 0]]}")
    try:
        _site(tmp_path, outside, "outside.yaml")
    except InputError as exc:
        codes = [(d.code, d.path) for d in exc.diagnostics]
        assert ("E-TORUS-COORD", "$.topology.coordinates.reserved[0]") in codes, codes
    else:
        raise AssertionError("a reserved slot outside the torus was accepted")
    # rtr01 holds one of [0,0,0]'s two node slots; two reserved slots over-fill it
    full = DEMO.replace(LINEAR, LINEAR[:-1] + ", reserved: [[0, 0, 0], [0, 0, 0]]}")
    try:
        _site(tmp_path, full, "full.yaml")
    except InputError as exc:
        assert any(d.code == "E-TORUS-FULL" for d in exc.diagnostics)
    else:
        raise AssertionError("an over-filled chip was accepted")
    # one reserved slot is a node no client takes: the client that had it moves on
    one = _coords(_site(tmp_path, DEMO.replace(LINEAR, LINEAR[:-1] + ", reserved: [[1, 0, 0]]}")))
    plain = _coords(_site(tmp_path, DEMO, "plain.yaml"))
    assert plain["nid00002"] == plain["nid00003"] == (1, 0, 0)  # README's example
    assert one["nid00001"] == (0, 0, 0) and one["nid00002"] == (1, 0, 0)
    assert one["nid00003"] == (2, 0, 0)
