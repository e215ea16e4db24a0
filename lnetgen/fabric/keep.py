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
from lnetgen.bounded import read_at_most
from lnetgen.diagnostics import Diagnostic, UsageError
from lnetgen.write import MARKER, WriteResult, write_tree

#: ``kind`` of the manifest (``lnetgen.write.manifest_kind``): what tells a kept directory
#: from other lnetgen output, for ``generate`` and ``collect`` as well.
WRITTEN_BY = "fabric check --keep"
_MANIFEST_MAX = 64 << 20  # bytes of an old manifest read at most
_SHOW = 10  # entries listed in a refusal


@dataclass(frozen=True)
class Stage:
    """A private staging tree (``root``) for the files that will be kept in ``target``."""

    root: str
    target: str

    def sub(self, *parts: str) -> tuple[str, str]:
        """A directory of the staging tree, and where it will end up under ``target``."""
        return os.path.join(self.root, *parts), os.path.join(self.target, *parts)


def _fail(path: str, msg: str, code: str = "E-OUTPUT") -> UsageError:
    return UsageError([Diagnostic(path, 0, 0, "error", code, "$", msg)])


def _listing(paths: list[str]) -> str:
    shown = ", ".join(sorted(paths)[:_SHOW])
    return shown + (f", ... {len(paths) - _SHOW} more" if len(paths) > _SHOW else "")


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _recorded(target: str) -> dict[str, str] | None:
    """Relative path -> sha256 from the ``fabric check --keep`` manifest of ``target``; None
    when there is none."""
    manifest = os.path.join(target, MARKER)
    try:
        if not stat.S_ISREG(os.lstat(manifest).st_mode):
            return None
        fd = os.open(manifest, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            blob = read_at_most(fh, _MANIFEST_MAX)
        if len(blob) > _MANIFEST_MAX:
            return None
        doc = json.loads(blob)
        if not isinstance(doc, dict) or doc.get("kind") != WRITTEN_BY:
            return None
        recorded = {}
        for entry in doc["files"]:
            path, sha = entry["path"], entry["sha256"]
            if not isinstance(path, str) or not isinstance(sha, str):
                return None
            norm = os.path.normpath(path)
            if norm == MARKER or os.path.isabs(norm) or norm.split(os.sep)[0] in ("..", "."):
                return None  # a path outside the directory: not what --keep writes
            recorded[norm] = sha
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    return recorded


def check_target(target: str) -> None:
    """Refuse ``target`` (``UsageError``, exit 2) unless it is new, an empty directory, or a
    directory an earlier ``fabric check --keep`` wrote and nobody changed since.

    Called before the simulations, so a refusal costs no time; :func:`write_kept` checks again
    (``write_tree`` does, under its lock) when it replaces the directory."""
    if os.path.islink(target):
        raise _fail(
            target,
            "--keep directory is a symbolic link; lnetgen never writes through one: give "
            f"the directory it points to ({os.path.realpath(target)}) or a new path",
        )
    if not os.path.lexists(target):
        return
    if not os.path.isdir(target):
        raise _fail(target, "--keep path exists and is not a directory")
    try:
        entries = sorted(os.listdir(target))
    except OSError as exc:
        raise _fail(target, f"cannot read the --keep directory: {exc.strerror}") from None
    if not entries:
        return
    recorded = _recorded(target)
    if recorded is None:
        shown = [e + ("/" if os.path.isdir(os.path.join(target, e)) else "") for e in entries]
        why = f"its {MARKER} is not one" if MARKER in entries else f"no {MARKER} of it"
        raise _fail(
            target,
            f"refusing to write into a non-empty directory that `fabric check --keep` did not "
            f"write ({why}); in the way: {_listing(shown)}; give a new or empty directory",
            "E-OUTPUT-FOREIGN",
        )
    try:
        foreign, edited = _foreign_and_edited(target, recorded)
    except OSError as exc:
        raise _fail(target, f"cannot read the --keep directory: {exc.strerror or exc}") from None
    if foreign:
        raise _fail(
            target,
            f"refusing to replace this --keep directory: {len(foreign)} entr(y/ies) in it were "
            f"not written by `fabric check --keep` ({_listing(foreign)}); lnetgen never "
            "overwrites or deletes what it did not write: move them away or give another "
            "directory",
            "E-OUTPUT-FOREIGN",
        )
    if edited:
        raise _fail(
            target,
            f"refusing to replace this --keep directory: {len(edited)} file(s) were changed "
            f"since `fabric check --keep` wrote them (their sha256 differs from {MARKER}: "
            f"{_listing(edited)}); copy your edits elsewhere or give another directory",
            "E-OUTPUT-EDITED",
        )


def _foreign_and_edited(target: str, recorded: dict[str, str]) -> tuple[list[str], list[str]]:
    dirs: set[str] = set()
    for rel in recorded:
        while rel := os.path.dirname(rel):
            dirs.add(rel)
    foreign: list[str] = []
    edited: list[str] = []
    for root, subdirs, files in os.walk(target):  # never descends into a link
        for name in list(subdirs):
            rel = os.path.relpath(os.path.join(root, name), target)
            if rel not in dirs or os.path.islink(os.path.join(root, name)):
                foreign.append(rel + "/")
                subdirs.remove(name)  # listed whole, not file by file
        for name in files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, target)
            if rel == MARKER:
                continue
            if rel not in recorded or not stat.S_ISREG(os.lstat(full).st_mode):
                foreign.append(rel)
            elif _sha256(full) != recorded[rel]:
                edited.append(rel)
    return foreign, edited


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
    """Replace ``stage.target`` by the staged files and their manifest (atomic swap)."""
    check_target(stage.target)  # a fabric-check manifest, not another command's output
    return write_tree(stage.target, _kept_files(stage, site), kind=WRITTEN_BY)


__all__ = ["WRITTEN_BY", "Stage", "check_target", "staging", "write_kept"]
