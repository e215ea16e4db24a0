"""What a run killed while it swapped out its old tree leaves, and what the next run's sweep
does with it (``lnetgen.leftovers``): only files the old manifest proves lnetgen's are
deleted; anything else is moved to ``<name>.lnetgen-saved-*`` and reported.

Regression: the sweep removed a swapped-out tree whole (``rmtree``), so a file that came into
the output at the very swap, or an owned file edited since, was lost when the run that was
moving it aside was killed before it could.  The states below are the ones such a kill leaves,
built by hand: where the kill falls is a matter of microseconds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import ROOT

from lnetgen import leftovers
from lnetgen.api import generate, write_output
from lnetgen.cli import main

DEMO = str(ROOT / "sites" / "demo.yaml")


def _demo_tree(out: Path) -> None:
    write_output(generate(DEMO, "groups"), str(out))


def _swapped_out(tmp_path: Path, name: str = ".out.lnetgen-k2x9_0ab") -> Path:
    """An old tree under a temporary's name, as the swap leaves it, with a user's file that
    came at the swap and an owned file edited since."""
    old = tmp_path / "old"
    _demo_tree(old)
    (old / "NOTES.txt").write_text("my notes\n")
    edited = sorted(p for p in old.rglob("*.yaml"))[0]
    edited.write_text(edited.read_text() + "# hand edit\n")
    gone = tmp_path / name
    old.rename(gone)
    return gone


def _saved(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob("out.lnetgen-saved-*"))


def test_a_swapped_out_tree_keeps_what_its_manifest_does_not_prove(tmp_path: Path) -> None:
    gone = _swapped_out(tmp_path)
    edited_rel = sorted(p.relative_to(gone) for p in gone.rglob("*.yaml"))[0]
    res = write_output(generate(DEMO, "groups"), str(tmp_path / "out"))
    assert not gone.exists()
    (saved,) = _saved(tmp_path)
    assert res.recovered == (str(saved),)
    kept = sorted(p.relative_to(saved).as_posix() for p in saved.rglob("*") if p.is_file())
    assert kept == sorted(["NOTES.txt", edited_rel.as_posix()])
    assert (saved / "NOTES.txt").read_text() == "my notes\n"
    assert (saved / edited_rel).read_text().endswith("# hand edit\n")


def test_a_tree_killed_while_it_was_removed_keeps_the_rest(tmp_path: Path) -> None:
    """``discard`` moves the old tree into a marked temporary and removes its manifest last:
    killed half-way, the manifest still proves what is left of the owned files."""
    gone = _swapped_out(tmp_path)
    grave = tmp_path / ".out.lnetgen-q1w2e3r4"
    grave.mkdir()
    (grave / leftovers.DISCARDING).write_text("")
    gone.rename(grave / "tree")
    for p in sorted((grave / "tree").rglob("*.yaml"))[1:3]:  # some owned files went already
        p.unlink()
    res = write_output(generate(DEMO, "groups"), str(tmp_path / "out"))
    assert not grave.exists()
    (saved,) = _saved(tmp_path)
    assert res.recovered == (str(saved),)
    assert (saved / "NOTES.txt").read_text() == "my notes\n"
    assert len([p for p in saved.rglob("*") if p.is_file()]) == 2


def test_once_the_manifest_is_gone_whatever_is_left_is_kept(tmp_path: Path) -> None:
    grave = tmp_path / ".out.lnetgen-q1w2e3r4"
    (grave / "tree" / "sub").mkdir(parents=True)
    (grave / leftovers.DISCARDING).write_text("")
    (grave / "tree" / "sub" / "late.txt").write_text("late\n")
    _demo_tree(tmp_path / "out")
    assert not grave.exists()
    (saved,) = _saved(tmp_path)
    assert (saved / "sub" / "late.txt").read_text() == "late\n"


def test_discard_removes_the_manifest_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed after any owned file, the tree being removed still has its manifest until the
    last owned file is gone."""
    old = tmp_path / "old"
    _demo_tree(old)
    order: list[str] = []
    real = os.unlink

    def unlink(path: str, *args: Any, **kwargs: Any) -> None:
        order.append(os.path.basename(path))
        real(path, *args, **kwargs)

    monkeypatch.setattr(leftovers.os, "unlink", unlink)
    leftovers.discard(str(tmp_path), "out", str(old))
    monkeypatch.undo()
    files = [n for n in order if n != leftovers.DISCARDING]
    assert files[-1] == "manifest.json" and len(files) > 5


def test_a_grave_whose_tree_moved_on_is_removed(tmp_path: Path) -> None:
    grave = tmp_path / ".out.lnetgen-q1w2e3r4"
    grave.mkdir()
    (grave / leftovers.DISCARDING).write_text("")
    _demo_tree(tmp_path / "out")
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_generate_reports_what_it_recovered(tmp_path: Path) -> None:
    _swapped_out(tmp_path)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["generate", DEMO, "-o", str(out), "--format", "json"])
    assert res.exit_code == 0, res.output
    (saved,) = _saved(tmp_path)
    doc = json.loads(res.stdout)
    assert doc["recovered"] == [str(saved)] and doc["saved"] == ""
    assert f"they were kept in {saved}" in res.stderr
    assert "a run killed while it replaced it" in res.stderr
