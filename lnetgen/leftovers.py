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

MARKER = "manifest.json"  # a directory lnetgen wrote always has one
PREFIX = ".lnetgen-"
MANIFEST_MAX = 64 << 20  # bytes of an old manifest read at most (Spider's: 4 MB)
#: what a temporary is called after ``.<name>.lnetgen-``
_TEMP_NAME = re.compile(r"(?:old-)?[a-z0-9_]{8}")
#: the file a temporary holds while it is filled (removed before it becomes the tree)
PARTIAL = ".lnetgen-partial"


def discard(parent: str, base: str, old: str) -> None:
    """Remove the swapped-out tree ``old`` so that a kill at any moment leaves only what the
    next run's sweep recognises (:func:`_temporary`): it is moved into a new temporary that
    holds the ``PARTIAL`` mark, and removed before the mark (``rmtree`` alone could remove its
    manifest first and be killed with the rest of the tree unmarked)."""
    try:
        grave = tempfile.mkdtemp(prefix=f".{base}{PREFIX}", dir=parent)
        open(os.path.join(grave, PARTIAL), "wb").close()
        os.rename(old, os.path.join(grave, "tree"))
    except OSError:
        shutil.rmtree(old, ignore_errors=True)
        return
    shutil.rmtree(os.path.join(grave, "tree"), ignore_errors=True)
    shutil.rmtree(grave, ignore_errors=True)


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
