"""The temporaries of writing an output tree (``lnetgen.write``): how they are named and
marked, how a swapped-out tree is discarded, and how the next run sweeps what a killed run
left, touching nothing else beside the output.

A temporary is ``.<name>.lnetgen-`` and ``mkdtemp``'s eight characters (``old-`` before them for
a tree moved aside where directories cannot be exchanged).  While it is filled it holds the
``PARTIAL`` mark; a complete or swapped-out tree holds an lnetgen manifest.  The sweep removes
a directory of such a name only when it is empty, marked or holds such a manifest: a user's
``.<name>.lnetgen-20241126/`` beside the output is none of these and stays.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from contextlib import suppress

MARKER = "manifest.json"  # a directory lnetgen wrote always has one
PREFIX = ".lnetgen-"
MANIFEST_MAX = 64 << 20  # bytes of an old manifest read at most (Spider's: 4 MB)
#: what a temporary is called after ``.<name>.lnetgen-``
_TEMP_NAME = re.compile(r"(?:old-)?[a-z0-9_]{8}")
#: the file a temporary holds while it is filled (removed before it becomes the tree)
PARTIAL = ".lnetgen-partial"


#: What an owned file was when it was checked: inode, size, modification time (ns).
Snap = tuple[int, int, int]


def snap_of(st: os.stat_result) -> Snap:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def owned_dirs(owned: Iterable[str]) -> set[str]:
    """The directories (relative, ``""`` the tree itself) that hold the files ``owned``."""
    dirs = {""}
    for rel in owned:
        rel = os.path.dirname(rel)
        while rel not in dirs:
            dirs.add(rel)
            rel = os.path.dirname(rel)
    return dirs


def discard(parent: str, base: str, old: str, owned: Mapping[str, Snap] | None = None) -> str:
    """Remove the swapped-out tree ``old``: the files ``owned`` that are still what they were
    when they were checked (without ``owned``: every file found), then the directories left
    empty.  Anything else, a file that came after the check, is not deleted: it is moved to
    ``<name>.lnetgen-saved-XXXXXXXX`` beside the output, whose path is returned ("" when
    nothing was left).

    While the owned files go, the tree lies in a new temporary that holds the ``PARTIAL``
    mark, so that a kill at any moment leaves only what the next run's sweep recognises
    (:func:`_temporary`; ``rmtree`` alone could remove the manifest first and be killed with
    the rest of the tree unmarked)."""
    try:
        grave = tempfile.mkdtemp(prefix=f".{base}{PREFIX}", dir=parent)
        open(os.path.join(grave, PARTIAL), "wb").close()
        os.rename(old, os.path.join(grave, "tree"))
        tree = os.path.join(grave, "tree")
    except OSError:
        grave, tree = "", old
    if owned is None:
        owned = _as_found(tree)
    for rel in sorted(owned):
        full = os.path.join(tree, rel)
        with suppress(OSError):
            if snap_of(os.lstat(full)) == owned[rel]:
                os.unlink(full)
    for root, _dirs, _files in os.walk(tree, topdown=False):
        with suppress(OSError):
            os.rmdir(root)  # only when empty
    if not os.path.lexists(tree):
        if grave:
            shutil.rmtree(grave, ignore_errors=True)
        return ""
    try:
        saved = tempfile.mkdtemp(prefix=f"{base}.lnetgen-saved-", dir=parent)
        os.rmdir(saved)
        os.rename(tree, saved)
    except OSError:  # left where it is, unmarked: no sweep removes it
        if grave:
            with suppress(OSError):
                os.unlink(os.path.join(grave, PARTIAL))
        return grave or tree
    if grave:
        shutil.rmtree(grave, ignore_errors=True)
    return saved


def _as_found(tree: str) -> dict[str, Snap]:
    """Every file below ``tree`` as it is now (links not followed)."""
    found: dict[str, Snap] = {}
    for root, _dirs, files in os.walk(tree):
        for name in files:
            full = os.path.join(root, name)
            with suppress(OSError):
                found[os.path.relpath(full, tree)] = snap_of(os.lstat(full))
    return found


def sweep(parent: str, base: str) -> None:
    """Remove temporary trees an interrupted run left beside the target (called under the
    lock, so no live run owns one): directories named exactly as ``mkdtemp`` names this
    output's temporaries, ``.<name>.lnetgen-`` and eight characters, nothing else (a user's
    ``.<name>.lnetgen-notes.txt`` or ``.<name>.lnetgen-backup/`` beside it was deleted)."""
    prefix = f".{base}{PREFIX}"
    for name in os.listdir(parent):
        full = os.path.join(parent, name)
        if (
            name.startswith(prefix)
            and _TEMP_NAME.fullmatch(name[len(prefix) :])
            and not os.path.islink(full)
            and os.path.isdir(full)
            and _temporary(full)
        ):
            shutil.rmtree(full, ignore_errors=True)


def _temporary(path: str) -> bool:
    """Whether a directory named like a temporary is one: empty, a new tree being filled (it
    holds ``PARTIAL``), or an old tree swapped out (an lnetgen manifest).  A user's
    directory of the same name is none of these and stays."""
    try:
        names = os.listdir(path)
        if not names or PARTIAL in names:
            return True
        if MARKER not in names or os.path.islink(os.path.join(path, MARKER)):
            return False
        return _mentions(os.path.join(path, MARKER), b'"lnetgen_version"')
    except OSError:
        return False


def _mentions(path: str, needle: bytes) -> bool:
    """Whether the file ``path`` (its first ``MANIFEST_MAX`` bytes) holds ``needle``, read
    block by block (a manifest's keys are sorted: ``lnetgen_version`` may come anywhere)."""
    seen, carry = 0, b""
    with open(path, "rb") as fh:
        while seen < MANIFEST_MAX:
            block = fh.read(1 << 20)
            if not block:
                return False
            if needle in carry + block:
                return True
            carry = block[-len(needle) :]
            seen += len(block)
    return False
