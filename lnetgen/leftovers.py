"""The temporaries of writing an output tree (``lnetgen.write``): how they are named and
marked, how a swapped-out tree is discarded, and how the next run sweeps what a killed run
left, touching nothing else beside the output.

A temporary is ``.<name>.lnetgen-`` and ``mkdtemp``'s eight characters (``old-`` before them for
a tree moved aside where directories cannot be exchanged).  It is one of:

- a new tree being filled: it holds the ``PARTIAL`` mark, and only files this run created
  (or hard links to the old tree's);
- a swapped-out tree: the old output, which holds an lnetgen manifest;
- a swapped-out tree being removed (``discard``): it holds the ``DISCARDING`` mark and the tree
  as ``tree/``, whose manifest is removed after every other owned file.

The sweep of a killed run's temporaries removes a new tree whole.  From a swapped-out tree it
deletes only what its manifest lists with the recorded sha256, and the manifest last; anything
else (a file that came at the very swap, one edited since) is moved to
``<name>.lnetgen-saved-XXXXXXXX`` beside the output and reported, never deleted.  A tree being
removed whose manifest is already gone holds only what was not lnetgen's: it is moved there
whole.  A directory of a temporary's name that is none of these (a user's
``.<name>.lnetgen-20241126/`` beside the output) stays as it is.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping
from contextlib import suppress

from lnetgen import strictjson
from lnetgen.bounded import read_at_most

MARKER = "manifest.json"  # a directory lnetgen wrote always has one
PREFIX = ".lnetgen-"
MANIFEST_MAX = 64 << 20  # bytes of an old manifest read at most (Spider's: 4 MB)
#: what a temporary is called after ``.<name>.lnetgen-``
_TEMP_NAME = re.compile(r"(?:old-)?[a-z0-9_]{8}")
#: the file a temporary holds while it is filled (removed before it becomes the tree)
PARTIAL = ".lnetgen-partial"
#: the file beside ``tree/`` in a temporary that holds a swapped-out tree being removed
DISCARDING = ".lnetgen-discarding"


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

    While the owned files go, the tree lies in a new temporary that holds the ``DISCARDING``
    mark, and its manifest goes last, so that a kill at any moment leaves what the next run's
    sweep can tell apart (``sweep``): owned files the manifest still proves, or only files
    that were not lnetgen's (``rmtree`` alone could remove the manifest first and be killed
    with the rest of the tree unmarked)."""
    try:
        grave = tempfile.mkdtemp(prefix=f".{base}{PREFIX}", dir=parent)
        open(os.path.join(grave, DISCARDING), "wb").close()
        os.rename(old, os.path.join(grave, "tree"))
        tree = os.path.join(grave, "tree")
    except OSError:
        grave, tree = "", old
    if owned is None:
        owned = _as_found(tree)
    for rel in sorted(owned, key=lambda r: (r == MARKER, r)):  # the manifest last
        full = os.path.join(tree, rel)
        with suppress(OSError):
            if snap_of(os.lstat(full)) == owned[rel]:
                os.unlink(full)
    return _keep(parent, base, tree, grave)


def _keep(parent: str, base: str, tree: str, grave: str) -> str:
    """Remove the directories of ``tree`` its owned files left empty; move what is left
    (nothing lnetgen may delete) to ``<base>.lnetgen-saved-XXXXXXXX`` beside the output and
    remove its temporary ``grave`` (``""``: none).  Returns the path the files are now under,
    "" when nothing was left."""
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
                os.unlink(os.path.join(grave, DISCARDING))
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


def sweep(parent: str, base: str) -> tuple[str, ...]:
    """Clear the temporaries an interrupted run left beside the target (called under the lock,
    so no live run owns one): directories named exactly as ``mkdtemp`` names this output's
    temporaries, ``.<name>.lnetgen-`` and eight characters, nothing else (a user's
    ``.<name>.lnetgen-notes.txt`` or ``.<name>.lnetgen-backup/`` beside it was deleted).

    What each holds is cleared as the module docstring says; returned: where the files that
    were not lnetgen's were moved (``<name>.lnetgen-saved-XXXXXXXX``, in name order)."""
    prefix = f".{base}{PREFIX}"
    saved: list[str] = []
    for name in sorted(os.listdir(parent)):
        full = os.path.join(parent, name)
        if not (
            name.startswith(prefix)
            and _TEMP_NAME.fullmatch(name[len(prefix) :])
            and not os.path.islink(full)
            and os.path.isdir(full)
        ):
            continue
        kind, listed = _temporary(full)
        if kind == "new":
            shutil.rmtree(full, ignore_errors=True)
        elif kind == "old":
            saved.append(_clear_old(parent, base, full, "", listed))
        elif kind == "discarding":
            tree = os.path.join(full, "tree")
            if os.path.isdir(tree) and not os.path.islink(tree):
                saved.append(_clear_old(parent, base, tree, full))
            else:  # the tree was moved on before the kill: only the mark is left
                shutil.rmtree(full, ignore_errors=True)
    return tuple(s for s in saved if s)


def _temporary(path: str) -> tuple[str, dict[str, str] | None]:
    """What a directory named like a temporary is (module docstring): ``"new"`` (empty, or
    holds ``PARTIAL``), ``"old"`` (an lnetgen manifest), ``"discarding"`` (holds
    ``DISCARDING``), or ``""``: a user's directory of the same name, which stays.  With
    ``"old"`` comes what its manifest lists (``_listed``), read once for both."""
    try:
        names = os.listdir(path)
        if not names or PARTIAL in names:
            return "new", None
        if DISCARDING in names:
            return "discarding", None
        if MARKER not in names:
            return "", None
        data = _read(path)
    except (OSError, ValueError):
        return "", None
    # a manifest's keys are sorted: ``lnetgen_version`` may come anywhere
    if data.find(b'"lnetgen_version"', 0, MANIFEST_MAX) < 0:
        return "", None
    try:
        return "old", _with_marker(parse_listed(data)[1])
    except ValueError:
        return "old", {}


def _clear_old(
    parent: str, base: str, tree: str, grave: str, listed: dict[str, str] | None = None
) -> str:
    """Delete from the swapped-out ``tree`` the files its manifest lists with their recorded
    sha256, then the manifest and the directories left empty; move anything else aside
    (``_keep``).  Without a readable manifest nothing in ``tree`` is proven lnetgen's.
    ``listed``: what ``_listed`` found when the caller has read it already.
    Returns where the rest went ("" when nothing was left)."""
    if listed is None:
        listed = _listed(tree)
    for root, _dirs, files in os.walk(tree):  # links are not followed
        for name in files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, tree)
            with suppress(OSError):
                if (
                    listed.get(rel)  # not the manifest (no hash): it goes after the rest
                    and stat.S_ISREG(os.lstat(full).st_mode)
                    and sha256_of(full) == listed[rel]
                ):
                    os.unlink(full)
    if listed:
        with suppress(OSError):
            os.unlink(os.path.join(tree, MARKER))
    return _keep(parent, base, tree, grave)


def _listed(tree: str) -> dict[str, str]:
    """Relative path -> sha256 of the files the lnetgen manifest of ``tree`` lists, the
    manifest itself included (with no hash); empty when there is none or it is not
    lnetgen's."""
    try:
        return _with_marker(read_listed(tree)[1])
    except ValueError:
        return {}


def _with_marker(listed: dict[str, str]) -> dict[str, str]:
    listed[MARKER] = ""
    return listed


def read_listed(tree: str) -> tuple[dict[str, object], dict[str, str]]:
    """The lnetgen manifest of ``tree`` and what it lists (relative path -> sha256); raises
    ``ValueError`` saying why when it is a link, cannot be read, is too large, is not an
    lnetgen manifest or lists a path outside the tree."""
    return parse_listed(_read(tree))


def _read(tree: str) -> bytes:
    """The first ``MANIFEST_MAX + 1`` bytes of the manifest of ``tree``; ``ValueError`` when it
    is a link or cannot be read."""
    manifest = os.path.join(tree, MARKER)
    try:
        if os.path.islink(manifest):
            raise ValueError(f"{MARKER} is a symbolic link")
        with open(manifest, "rb") as fh:
            return read_at_most(fh, MANIFEST_MAX)
    except OSError as exc:
        raise ValueError(str(exc)) from None


def parse_listed(data: bytes) -> tuple[dict[str, object], dict[str, str]]:
    """``read_listed`` of a manifest's bytes ``data``."""
    try:
        if len(data) > MANIFEST_MAX:
            raise ValueError(f"larger than {MANIFEST_MAX >> 20} MiB")
        doc = strictjson.loads(data)
        if not isinstance(doc, dict) or "lnetgen_version" not in doc:
            raise ValueError("no lnetgen_version")
        listed: dict[str, str] = {}
        for entry in doc["files"]:
            path, sha = entry_path(entry["path"]), entry["sha256"]
            if not isinstance(sha, str):
                raise ValueError(f"bad entry {entry!r:.80}")
            listed[path] = sha
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except (KeyError, TypeError) as exc:
        raise ValueError(str(exc)) from None
    return doc, listed


def entry_path(path: object) -> str:
    """A manifest entry's path, which must stay inside the tree (no absolute path, no ``..``,
    written as lnetgen writes it); ``ValueError`` otherwise."""
    if not isinstance(path, str) or not path or path == MARKER:
        raise ValueError(f"bad entry path {path!r:.80}")
    norm = os.path.normpath(path)
    if os.path.isabs(path) or norm != path or norm.split(os.sep)[0] == ".." or "\x00" in path:
        raise ValueError(f"an entry's path leaves the tree ({path!r:.80})")
    return norm


def sha256_of(path: str) -> str:
    """The sha256 of the file ``path``, read block by block."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
