"""The directory ``fabric check --keep DIR`` leaves its simulations in, written safely.

ibsim and OpenSM run in a directory and write what they like there (logs, ``guid2lid``,
dumps), so they never run in DIR: every simulation runs in a private staging tree
(:func:`staging`, a new ``mkdtemp`` directory), and at the end the finished set, with a
``manifest.json`` that records each file's sha256, replaces DIR in one atomic swap
(:func:`lnetgen.write.write_tree`: locked, no link followed, nothing foreign deleted).

DIR must be new, empty, or a directory an earlier ``fabric check --keep`` wrote: its
``manifest.json`` says ``kind: fabric check --keep`` and every entry in it is a file
that manifest lists, with the recorded hash.  Anything else -- a symbolic link, a file of
the user's, a link inside, a file edited since, another command's output -- is refused
before the simulations start (:func:`check_target`), listing what is in the way.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from lnetgen import __version__
from lnetgen.leftovers import MARKER
from lnetgen.write import WriteResult, check_replaceable, write_tree

#: ``kind`` of the manifest (``lnetgen.write.manifest_kind``): what tells a kept directory
#: from other lnetgen output, for ``generate`` and ``collect`` as well.
WRITTEN_BY = "fabric check --keep"


@dataclass(frozen=True)
class Stage:
    """A private staging tree (``root``) for the files that will be kept in ``target``."""

    root: str
    target: str

    def sub(self, *parts: str) -> tuple[str, str]:
        """A directory of the staging tree, and where it will end up under ``target``."""
        return os.path.join(self.root, *parts), os.path.join(self.target, *parts)


def check_target(target: str) -> None:
    """Refuse ``target`` (``UsageError``, exit 2) unless it is new, an empty directory, or a
    directory an earlier ``fabric check --keep`` wrote and nobody changed since: the rules of
    :func:`lnetgen.write.write_tree`, checked before the simulations so a refusal costs no
    time; :func:`write_kept` checks again (``write_tree`` does, under its lock)."""
    check_replaceable(target, WRITTEN_BY)


@contextmanager
def staging(target: str | None) -> Iterator[Stage | None]:
    """A private staging tree for ``target`` (None: nothing is kept), removed at the end.

    ``target`` is checked first (:func:`check_target`)."""
    if target is None:
        yield None
        return
    target = os.path.abspath(target)
    check_target(target)
    root = tempfile.mkdtemp(prefix="lnetgen-keep-")
    try:
        yield Stage(root, target)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _kept_files(stage: Stage, site: str) -> Iterator[tuple[str, str]]:
    """The staged files (regular files only, in path order), then their manifest."""
    hashes: dict[str, str] = {}
    found: list[str] = []
    for root, subdirs, files in os.walk(stage.root):
        subdirs.sort()
        for name in files:
            full = os.path.join(root, name)
            if stat.S_ISREG(os.lstat(full).st_mode):  # no socket, FIFO or link of a program
                found.append(os.path.relpath(full, stage.root))
    for rel in sorted(found):
        with open(os.path.join(stage.root, rel), "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
        hashes[rel] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        yield rel, text
    manifest = {
        "lnetgen_version": __version__,
        "kind": WRITTEN_BY,
        "site": site,
        "files": [{"path": p, "sha256": h} for p, h in sorted(hashes.items())],
    }
    yield MARKER, json.dumps(manifest, indent=1, sort_keys=True) + "\n"


def write_kept(stage: Stage, site: str) -> WriteResult:
    """Replace ``stage.target`` by the staged files and their manifest (atomic swap);
    ``write_tree`` refuses, under its lock, what is not an earlier ``--keep``'s."""
    return write_tree(stage.target, _kept_files(stage, site), kind=WRITTEN_BY)


__all__ = ["WRITTEN_BY", "Stage", "check_target", "staging", "write_kept"]
