"""What of an existing output tree a run may replace (``lnetgen.write``, whose docstring states
the contract): the ownership check of an old tree against its lnetgen manifest when the run
starts, and the checks just before the swap that nothing came or changed since and that no
input of the run would be deleted.  Every refusal is a ``UsageError``.
"""

from __future__ import annotations

import os
import stat
from contextlib import suppress

from lnetgen import inputs
from lnetgen.diagnostics import Diagnostic, UsageError, printable
from lnetgen.leftovers import MARKER, Snap, owned_dirs, read_listed, sha256_of, snap_of

_SHOW = 10  # foreign or edited paths listed in a refusal


def _fail(path: str, msg: str, code: str = "E-OUTPUT") -> UsageError:
    return UsageError([Diagnostic(path, 0, 0, "error", code, "$", msg)])


def manifest_kind(doc: dict[str, object]) -> str:
    """Which command wrote a manifest: its ``kind``, else ``collect`` for one that records a
    collection and ``generate`` for the rest (manifests written before ``kind`` existed)."""
    kind = doc.get("kind")
    if isinstance(kind, str):
        return kind
    return "collect" if "collected" in doc else "generate"


def _recorded(target: str, kind: str) -> dict[str, str]:
    """Relative path -> sha256 from the lnetgen manifest of ``target``; raises ``UsageError``
    when there is none, it is not lnetgen's, lists a path outside the tree, or was written by
    another command (``kind``: a ``collect``'s dumps are not ``generate``'s to replace)."""
    manifest = os.path.join(target, MARKER)
    if os.path.islink(manifest) or not os.path.isfile(manifest):
        shown = [
            e + ("/" if os.path.isdir(os.path.join(target, e)) else "") for e in os.listdir(target)
        ]
        raise _fail(
            target,
            "refusing to replace a non-empty directory that lnetgen did not "
            f"write (no {MARKER}; in it: {listing(shown)}); choose an empty or new directory",
            "E-OUTPUT-FOREIGN",
        )
    try:
        doc, recorded = read_listed(target)
    except ValueError as exc:
        raise _fail(
            target,
            f"refusing to replace this directory: its {MARKER} is not an lnetgen manifest "
            f"({exc}); choose an empty or new directory",
            "E-OUTPUT-FOREIGN",
        ) from None
    found = manifest_kind(doc)
    if found != kind:
        raise _fail(
            target,
            f"refusing to replace this directory: lnetgen {found} wrote it, and {kind} "
            f"replaces only its own output; choose another directory",
            "E-OUTPUT-FOREIGN",
        )
    return recorded


def replaceable(target: str, force: bool, kind: str) -> dict[str, str]:
    """The files of the existing tree ``target`` that this run may replace: relative path ->
    recorded sha256 (``manifest.json`` itself, and a file edited since when ``force``, with an
    empty hash).

    Raises ``UsageError`` when anything in it is not lnetgen's, or a file lnetgen wrote was
    edited since (unless ``force``)."""
    if not os.listdir(target):
        return {}
    recorded = _recorded(target, kind)
    dirs = owned_dirs(recorded)  # relative paths (``entry_path``)
    foreign: list[str] = []
    edited: list[str] = []
    locked: list[str] = []
    for root, subdirs, files in os.walk(target):
        if not os.access(root, os.W_OK | os.X_OK):  # its files could not be removed
            locked.append(os.path.relpath(root, target) + "/")
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
            elif sha256_of(full) != recorded[rel]:
                edited.append(rel)
    if foreign:
        raise _fail(
            target,
            f"refusing to replace this directory: {len(foreign)} entr(y/ies) in it were not "
            f"written by lnetgen ({listing(foreign)}); lnetgen never deletes what it did "
            "not write: move them away or choose another output directory",
            "E-OUTPUT-FOREIGN",
        )
    if locked:
        raise _fail(
            target,
            f"cannot replace this directory: {listing(locked)} is read-only, so the old "
            "files in it could not be removed; make it writable or choose another directory",
        )
    if edited and not force:
        raise _fail(
            target,
            f"{len(edited)} file(s) were changed since lnetgen wrote them (their sha256 "
            f"differs from {MARKER}: {listing(edited)}); keep your edits elsewhere"
            + (", or rerun with --force to overwrite them" if kind == "generate" else ""),
            "E-OUTPUT-EDITED",
        )
    owned = {rel: ("" if rel in edited else sha) for rel, sha in recorded.items()}
    owned[MARKER] = ""
    return {rel: sha for rel, sha in owned.items() if os.path.isfile(os.path.join(target, rel))}


def listing(paths: list[str]) -> str:
    # a name may hold a line break: escaped, so it cannot pass for the next line of the message
    shown = ", ".join(printable(p) for p in sorted(paths)[:_SHOW])
    return shown + (f", ... {len(paths) - _SHOW} more" if len(paths) > _SHOW else "")


def check_path(target: str) -> None:
    """Refuse an output path that is a symbolic link or something other than a directory."""
    if os.path.islink(target):
        raise _fail(
            target,
            "output path is a symbolic link; give the directory it points to "
            f"({os.path.realpath(target)}) or a new path",
        )
    if os.path.exists(target) and not os.path.isdir(target):
        raise _fail(target, "output path exists and is not a directory")


def check_replaceable(target: str, kind: str) -> None:
    """Refuse (``UsageError``) what :func:`write_tree` with ``kind`` would refuse to replace,
    without writing: for a command that works a long time before it writes (``fabric check
    --keep``), so a refusal costs nothing; ``write_tree`` checks again under its lock."""
    target = os.path.abspath(target)
    check_path(target)
    if os.path.isdir(target):
        try:
            replaceable(target, False, kind)
        except OSError as exc:
            raise _fail(target, f"cannot read: {exc.strerror or exc}") from None


def keeps_inputs(target: str, owned: dict[str, str], seen: set[str]) -> None:
    """Refuse (``UsageError``) to delete a file of the old tree that this run read as input and
    does not write again (``generate out/site.yaml -o out`` with a manifest that lists
    ``site.yaml`` deleted the inventory).  A file the run writes again, as ``--keep-nets
    out/plan.json`` does, is lnetgen's own and is replaced."""
    read = [
        rel
        for rel in owned
        if rel not in seen and rel != MARKER and inputs.is_input(os.path.join(target, rel))
    ]
    if read:
        raise _fail(
            target,
            f"{listing(read)} in this directory is an input of this run, which lnetgen "
            "never deletes: move it out of the output directory",
            "E-OUTPUT-FOREIGN",
        )


def snapshot(target: str, owned: dict[str, str]) -> tuple[dict[str, Snap], set[str]]:
    """What each owned file of ``target`` is now (inode, size, modification time), and its
    directories: the old tree is checked when the run starts, and replaced only after every
    new file is written."""
    snap: dict[str, Snap] = {}
    for rel in owned:
        with suppress(OSError):
            snap[rel] = snap_of(os.lstat(os.path.join(target, rel)))
    dirs = {""}
    for root, subdirs, _files in os.walk(target):  # links were refused by ``replaceable``
        dirs.update(os.path.relpath(os.path.join(root, d), target) for d in subdirs)
    return snap, dirs


def still_owned(target: str, snap: dict[str, Snap], dirs: set[str]) -> None:
    """Refuse (``UsageError``) to swap out ``target`` when anything in it is not what was
    checked when the run started: a file or directory that came since (an editor's swap file,
    a ``NOTES.txt``) or an owned file changed since.  Swapping it out deleted it."""
    late: list[str] = []
    for root, subdirs, files in os.walk(target):
        for name in list(subdirs):
            rel = os.path.relpath(os.path.join(root, name), target)
            if rel not in dirs or os.path.islink(os.path.join(root, name)):
                late.append(rel + "/")
                subdirs.remove(name)
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), target)
            try:
                now = snap_of(os.lstat(os.path.join(root, name)))
            except OSError:
                continue  # gone: nothing to keep
            if snap.get(rel) != now:
                late.append(rel)
    if late:
        raise _fail(
            target,
            f"{len(late)} entr(y/ies) came or changed in this directory while lnetgen wrote "
            f"the new tree ({listing(late)}); nothing was replaced, and lnetgen never deletes "
            "what it did not write: move them away and run again",
            "E-OUTPUT-FOREIGN",
        )
