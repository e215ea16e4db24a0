"""Atomic, locked, write-if-changed output trees that delete only what lnetgen owns.

``write_tree(target, files)`` builds the complete new tree in a temporary directory beside
``target``, hard-links files whose content did not change to the old copies (so their inode and
mtime stay as they were and rsync/Ansible see no change), then swaps the two directories with
one ``renameat2(RENAME_EXCHANGE)`` on Linux (two renames elsewhere).  Whatever happens, a reader
sees either the whole old tree or the whole new one.

The data-safety contract (README, "Data safety"):

* **Lock.** The whole write runs under an exclusive ``flock`` on ``.<name>.lnetgen.lock``
  beside ``target`` (beside, because the target itself is swapped for a new inode); the file is
  removed at the end.  A second run on the same output is refused at once
  (``E-OUTPUT-LOCKED``) instead of racing it; outputs side by side are written in parallel.
* **Ownership.** An existing non-empty ``target`` is replaced only when its ``manifest.json``
  is lnetgen's own (it names ``lnetgen_version`` and lists ``files`` with ``sha256``) and every
  file in it is ``manifest.json`` or listed there.  Anything else -- a ``.git``, a ``NOTES.txt``,
  a foreign ``manifest.json`` -- makes the run refuse and list what is in the way; lnetgen never
  deletes a file it did not write.  A listed file whose content no longer has the recorded hash
  was edited by hand: refused unless ``force``.  A manifest listing a path outside the tree,
  nested too deeply or over 64 MiB is not lnetgen's; one another command wrote (``collect``'s
  live dumps for ``generate``, and the reverse) is not this command's to replace; a read-only
  directory in the old tree is refused before anything moves.  A listed file this run read as
  input and does not write again (the inventory in ``--out``) is refused, not deleted.
* **Meanwhile.** The old tree is checked when the run starts and swapped out only after the new
  one is written: a file that came or changed in between is refused before the swap, and one
  that came at the very swap is moved to ``<name>.lnetgen-saved-XXXXXXXX`` beside the output
  (``WriteResult.saved``): only owned files, as they were checked, are deleted.
* **No links out.** A symbolic-link ``target`` is refused (replacing it would leave the link's
  destination behind and the link in a temporary); links found inside an old tree were not
  written by lnetgen and are refused like any foreign file.
* **Temporaries.** Every failure removes this run's temporary directory (a SIGTERM unwinds
  like Ctrl-C, ``lnetgen.cli``); temporaries of a run killed earlier (named exactly as
  ``mkdtemp`` names this target's, so the same lock covers them) are swept by the next run,
  under the lock; from a swapped-out old tree only the files its manifest proves lnetgen's
  are deleted, the rest moved to ``<name>.lnetgen-saved-XXXXXXXX`` (``WriteResult.recovered``,
  ``lnetgen.leftovers``).
* **Single files** (``write_file``, ``lnetgen.onefile``) are replaced atomically, never
  written over a file this run read as input (``lnetgen.inputs``), a block device or through a
  link to a regular file.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace

from lnetgen import inputs
from lnetgen.diagnostics import Diagnostic, UsageError, printable
from lnetgen.leftovers import (
    MARKER,
    PARTIAL,
    PREFIX,
    Snap,
    discard,
    owned_dirs,
    read_listed,
    sha256_of,
    snap_of,
    sweep,
)
from lnetgen.onefile import write_file

_LOCK_SUFFIX = ".lnetgen.lock"  # not PREFIX: the sweep of temporaries must never match it
_SHOW = 10  # foreign or edited paths listed in a refusal


@dataclass(frozen=True)
class WriteResult:
    target: str
    written: tuple[str, ...]  # relative paths whose content is new or changed
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]
    #: where files that came into the old tree after it was checked were moved ("" none)
    saved: str = ""
    #: where files that were not lnetgen's, left by a run killed while it swapped out its old
    #: tree, were moved by this run's sweep (``lnetgen.leftovers.sweep``)
    recovered: tuple[str, ...] = ()


def _fail(path: str, msg: str, code: str = "E-OUTPUT") -> UsageError:
    return UsageError([Diagnostic(path, 0, 0, "error", code, "$", msg)])


def _safe_rel(rel: str) -> str:
    norm = os.path.normpath(rel)
    if os.path.isabs(rel) or norm.startswith("..") or "\x00" in rel or norm != rel:
        raise AssertionError(f"unsafe output path {rel!r}")  # names are validated upstream
    return norm


def _exchange(a: str, b: str) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return bool(rc == 0)


@contextmanager
def output_lock(parent: str, target: str) -> Iterator[None]:
    """Hold an exclusive, non-blocking ``flock`` on the lock file ``.<name>.lnetgen.lock``
    beside ``target`` for the block, and remove the file at the end.

    The lock is per output directory (outputs side by side are written in parallel) and held on
    a file beside it, because the directory itself is swapped for a new inode.  A run that
    locked the file after another removed it sees that the path no longer names its inode and
    counts as locked out, so removing the file cannot let two runs in.  Raises ``UsageError``
    (``E-OUTPUT-LOCKED``) when another process holds the lock."""
    path = os.path.join(parent, f".{os.path.basename(target)}{_LOCK_SUFFIX}")
    locked_out = _fail(
        target,
        f"another lnetgen run is writing this output (it holds {path}); wait for it to finish",
        "E-OUTPUT-LOCKED",
    )
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise _fail(path, f"cannot create the output's lock file: {exc.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size:  # lnetgen's lock files are always empty
        os.close(fd)
        raise _fail(
            path,
            "a file lnetgen did not make has the name of this output's lock file; move it "
            "away (lnetgen removes its lock files, and would remove this one)",
            "E-OUTPUT-FOREIGN",
        )
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise locked_out from None
            raise _fail(path, f"cannot lock: {exc.strerror}") from None
        try:
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except OSError:
            same = False
        if not same:  # the holder removed it between our open and our lock
            raise locked_out
        try:
            yield
        finally:
            with suppress(OSError):
                os.unlink(path)  # still holding the lock: nobody else can own this inode
    finally:
        os.close(fd)  # closing the descriptor releases the lock


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
            f"write (no {MARKER}; in it: {_listing(shown)}); choose an empty or new directory",
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


def _owned(target: str, force: bool, kind: str) -> dict[str, str]:
    """The files of the existing tree ``target`` that this run may replace: relative path ->
    recorded sha256 (``manifest.json`` itself included, with an empty hash).

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
            f"written by lnetgen ({_listing(foreign)}); lnetgen never deletes what it did "
            "not write: move them away or choose another output directory",
            "E-OUTPUT-FOREIGN",
        )
    if locked:
        raise _fail(
            target,
            f"cannot replace this directory: {_listing(locked)} is read-only, so the old "
            "files in it could not be removed; make it writable or choose another directory",
        )
    if edited and not force:
        raise _fail(
            target,
            f"{len(edited)} file(s) were changed since lnetgen wrote them (their sha256 "
            f"differs from {MARKER}: {_listing(edited)}); keep your edits elsewhere"
            + (", or rerun with --force to overwrite them" if kind == "generate" else ""),
            "E-OUTPUT-EDITED",
        )
    owned = {rel: ("" if rel in edited else sha) for rel, sha in recorded.items()}
    owned[MARKER] = ""
    return {rel: sha for rel, sha in owned.items() if os.path.isfile(os.path.join(target, rel))}


def _listing(paths: list[str]) -> str:
    # a name may hold a line break: escaped, so it cannot pass for the next line of the message
    shown = ", ".join(printable(p) for p in sorted(paths)[:_SHOW])
    return shown + (f", ... {len(paths) - _SHOW} more" if len(paths) > _SHOW else "")


def _check_path(target: str) -> None:
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
    _check_path(target)
    if os.path.isdir(target):
        try:
            _owned(target, False, kind)
        except OSError as exc:
            raise _fail(target, f"cannot read: {exc.strerror or exc}") from None


def write_tree(
    target: str,
    files: Iterable[tuple[str, str]],
    *,
    force: bool = False,
    kind: str = "generate",
) -> WriteResult:
    """Replace directory ``target`` by exactly ``files`` (relative path, text).

    ``files`` is consumed lazily, one file at a time.  ``kind``: the command writing, which
    replaces only a tree whose manifest the same command wrote (``manifest_kind``).  Raises
    ``UsageError`` for every refusal listed in the module docstring and for I/O errors."""
    target = os.path.abspath(target)
    parent = os.path.dirname(target)
    base = os.path.basename(target)
    _check_path(target)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        raise _fail(parent, f"cannot create: {exc.strerror}") from None
    with output_lock(parent, target):
        recovered = sweep(parent, base)
        res = _write_locked(target, parent, base, files, force, kind)
        return replace(res, recovered=recovered)


def _write_locked(
    target: str,
    parent: str,
    base: str,
    files: Iterable[tuple[str, str]],
    force: bool,
    kind: str,
) -> WriteResult:
    try:
        tmp = tempfile.mkdtemp(prefix=f".{base}{PREFIX}", dir=parent)
        open(os.path.join(tmp, PARTIAL), "wb").close()  # what tells the sweep it is ours
    except OSError as exc:
        raise _fail(parent, f"cannot create a temporary directory: {exc.strerror}") from None
    written, unchanged = [], []
    saved = current = ""
    seen: set[str] = set()
    old: dict[str, str] = {}
    try:
        if os.path.isdir(target):
            old = _owned(target, force, kind)
        snap, snap_dirs = _snapshot(target, old)
        for rel, text in files:
            rel = _safe_rel(rel)
            if rel in seen:  # validation prevents it; a second write would lose the first
                raise AssertionError(f"two output files share the path {rel!r}")
            seen.add(rel)
            current, dest = rel, os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            data = text.encode("utf-8")
            prev = old.get(rel)
            # an owned file was hashed against the manifest: equal hashes mean equal content
            if prev is not None and (
                hashlib.sha256(data).hexdigest() == prev
                if prev
                else _same(os.path.join(target, rel), data)
            ):
                os.link(os.path.join(target, rel), dest)
                unchanged.append(rel)
                continue
            # never over a file this run wrote: on a case-insensitive file system rtr01.yaml
            # and RTR01.yaml are one file, and the second silently replaced the first
            with open(dest, "xb") as fh:
                fh.write(data)
            os.chmod(dest, 0o644)
            written.append(rel)
        current = ""
        os.unlink(os.path.join(tmp, PARTIAL))  # not part of the tree
        os.chmod(tmp, 0o755)
        _sync(tmp)  # every new file durable before the swap makes it the tree
        if os.path.isdir(target):
            _keeps_inputs(target, old, seen)
            _still_owned(target, snap, snap_dirs)  # what came while the new tree was written stays
            if not _exchange(tmp, target):
                aside = tempfile.mkdtemp(prefix=f".{base}{PREFIX}old-", dir=parent)
                os.rmdir(aside)
                os.rename(target, aside)
                try:
                    os.rename(tmp, target)
                except OSError:
                    os.rename(aside, target)  # the old tree back: never left aside alone
                    raise
                tmp = aside
            saved = discard(parent, base, tmp, snap)  # the old tree: owned files go
        else:
            os.rename(tmp, target)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        at = f" {current}" if current else ""
        why = (
            "this run already wrote a file of that name (names that differ only in case are "
            "one file on this file system)"
            if isinstance(exc, FileExistsError)
            else f"{exc.strerror} (a mount point cannot be swapped for a new tree: give a "
            "directory inside it)"
            if exc.errno == errno.EBUSY
            else exc.strerror or exc
        )
        raise _fail(target, f"cannot write output{at}: {why}; the directory is as it was") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    removed = tuple(sorted(set(old) - seen))
    return WriteResult(target, tuple(sorted(written)), tuple(sorted(unchanged)), removed, saved)


def _keeps_inputs(target: str, owned: dict[str, str], seen: set[str]) -> None:
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
            f"{_listing(read)} in this directory is an input of this run, which lnetgen "
            "never deletes: move it out of the output directory",
            "E-OUTPUT-FOREIGN",
        )


def _snapshot(target: str, owned: dict[str, str]) -> tuple[dict[str, Snap], set[str]]:
    """What each owned file of ``target`` is now (inode, size, modification time), and its
    directories: the old tree is checked when the run starts, and replaced only after every
    new file is written."""
    snap: dict[str, Snap] = {}
    for rel in owned:
        with suppress(OSError):
            snap[rel] = snap_of(os.lstat(os.path.join(target, rel)))
    dirs = {""}
    for root, subdirs, _files in os.walk(target):  # links were refused by ``_owned``
        dirs.update(os.path.relpath(os.path.join(root, d), target) for d in subdirs)
    return snap, dirs


def _still_owned(target: str, snap: dict[str, Snap], dirs: set[str]) -> None:
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
            f"the new tree ({_listing(late)}); nothing was replaced, and lnetgen never deletes "
            "what it did not write: move them away and run again",
            "E-OUTPUT-FOREIGN",
        )


def _sync(path: str) -> None:
    """Flush the file system holding ``path`` to disk (``syncfs``; ``sync`` where there is
    none): one call for the whole tree instead of an ``fsync`` per file, which cost more than
    writing Spider's 35,000 files."""
    libc_name = ctypes.util.find_library("c")
    fn = getattr(ctypes.CDLL(libc_name, use_errno=True), "syncfs", None) if libc_name else None
    if fn is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if fn(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), path)
    finally:
        os.close(fd)


def _same(path: str, data: bytes) -> bool:
    try:
        if os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as fh:
            return fh.read() == data
    except OSError:
        return False


__all__ = [
    "WriteResult",
    "check_replaceable",
    "manifest_kind",
    "output_lock",
    "write_file",
    "write_tree",
]
