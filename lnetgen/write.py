"""Atomic, locked, write-if-changed output trees that delete only what lnetgen owns.

``write_tree(target, files)`` builds the complete new tree in a temporary directory beside
``target``, hard-links files whose content did not change to the old copies (so their inode and
mtime stay as they were and rsync/Ansible see no change), then swaps the two directories with
one ``renameat2(RENAME_EXCHANGE)`` on Linux (two renames elsewhere).  Whatever happens, a reader
sees either the whole old tree or the whole new one.

The data-safety contract (README, "Data safety"; the checks of an old tree are
``lnetgen.owned``'s):

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
* **Interruptions.** Every failure removes this run's temporary directory (a SIGTERM unwinds
  like Ctrl-C, ``lnetgen.cli``).  From the swap until the old tree is discarded, SIGINT, SIGTERM
  and SIGHUP are held back (``_held_signals``) and honoured only once nothing temporary is
  left: an interruption there used to leave the new tree in place, half of the old one in a
  temporary, and the run saying nothing of which tree the output held.  Every interruption
  (``KeyboardInterrupt``, ``SystemExit``) that leaves ``write_tree`` carries a note
  (``add_note``) saying whether ``target`` holds the old tree or the new one.
* **Temporaries.** Temporaries of a run killed earlier (named exactly as
  ``mkdtemp`` names this target's, so the same lock covers them) are swept by the next run,
  under the lock; from a swapped-out old tree only the files its manifest proves lnetgen's
  are deleted, the rest moved to ``<name>.lnetgen-saved-XXXXXXXX`` (``WriteResult.recovered``,
  ``lnetgen.leftovers``).
* **Forced overwrites.** With ``force``, a file edited by hand since lnetgen wrote it is replaced
  (or removed) as the caller asked, but it is named (``WriteResult.overwritten``) and its edited
  copy is kept in ``<name>.lnetgen-saved-XXXXXXXX`` beside the output (``WriteResult.kept``):
  a hand edit may be the only record of a fix made on a live system, deleting a kept copy is
  one ``rm`` while a lost edit cannot be had back, and beside the output (not in it) the copy
  is no file lnetgen would then refuse as foreign, nor one a deployment would pick up.
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
import signal
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace

from lnetgen.diagnostics import Diagnostic, UsageError, printable
from lnetgen.leftovers import MARKER, PARTIAL, PREFIX, discard, sweep
from lnetgen.onefile import write_file
from lnetgen.owned import (
    check_path,
    check_replaceable,
    keeps_inputs,
    manifest_kind,
    replaceable,
    snapshot,
    still_owned,
)

_LOCK_SUFFIX = ".lnetgen.lock"  # not PREFIX: the sweep of temporaries must never match it
#: signals held back from the swap until the old tree is discarded: the ways to stop a run
#: that let it unwind (SIGKILL cannot be held; the next run's sweep clears after it)
_STOPS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


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
    #: files edited by hand since lnetgen wrote them that ``force`` replaced or removed
    overwritten: tuple[str, ...] = ()
    #: where the edited copies of ``overwritten`` were kept, under their relative paths
    kept: str = ""


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
    ``UsageError`` for every refusal listed in the module docstring and for I/O errors; an
    interruption leaves with a note saying which tree ``target`` holds (``_note``)."""
    shown, target = target, os.path.abspath(target)  # the path as given, for the notes
    parent = os.path.dirname(target)
    base = os.path.basename(target)
    check_path(target)
    existed = os.path.isdir(target)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        raise _fail(parent, f"cannot create: {exc.strerror}") from None
    done = False
    try:
        with output_lock(parent, target):
            recovered = sweep(parent, base)
            res = _write_locked(target, parent, base, files, force, kind, shown)
            done = True
        return replace(res, recovered=recovered)
    except (KeyboardInterrupt, SystemExit) as exc:  # noted already when it came in the write
        _note(exc, shown, done, existed)
        raise


def _note(exc: BaseException, target: str, replaced: bool, existed: bool) -> None:
    """Add to the interruption ``exc`` (unless it has a note already) which tree ``target``
    holds: the new one once ``replaced``, else the old one (none when it did not exist)."""
    if getattr(exc, "__notes__", None):
        return
    where = printable(target)
    if replaced:
        exc.add_note(f"stopped after the new tree was swapped in: {where} holds the new tree")
    elif existed:
        exc.add_note(f"stopped before the swap: {where} holds the old tree, as it was")
    else:
        exc.add_note(f"stopped before the tree was complete: {where} was not created")


@contextmanager
def _held_signals() -> Iterator[None]:
    """Hold back ``_STOPS`` for the block: what came meanwhile is delivered, and
    its handler run (``KeyboardInterrupt``; ``SystemExit`` from the CLI's SIGTERM handler),
    when the block is left.  The swap and the discarding of the old tree are never cut short:
    the clean-up is finished before the signal is honoured, and the run ends with the new tree
    in place and nothing temporary beside it.  A Ctrl-C there waits as long as the removal of
    the old tree (8 s for Spider's 34,869 files in 17,000 directories on a slow overlay file
    system, well under a second for the demo): the same time cleaning up on the way out takes,
    and SIGKILL still stops the run at once (the next run's sweep clears after it)."""
    if threading.current_thread() is not threading.main_thread():
        # handlers can only be set from the main thread; a library caller's thread holds the
        # signals back in itself (they reach the main thread's handlers anyway)
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        return
    # A per-thread mask is not enough: a signal sent to the process (Ctrl-C, kill) goes to any
    # thread that does not block it, and numpy's threads do not; Python then runs the handler
    # in this thread at once.  So the handlers are swapped for one that only records.
    came: list[int] = []
    old = {s: signal.signal(s, lambda signum, _frame: came.append(signum)) for s in _STOPS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        if came:  # honoured now, with the handler the run had (KeyboardInterrupt, Terminated)
            signal.raise_signal(came[0])


def _write_locked(
    target: str,
    parent: str,
    base: str,
    files: Iterable[tuple[str, str]],
    force: bool,
    kind: str,
    shown: str,
) -> WriteResult:
    existed = os.path.isdir(target)
    try:
        tmp = tempfile.mkdtemp(prefix=f".{base}{PREFIX}", dir=parent)
        open(os.path.join(tmp, PARTIAL), "wb").close()  # what tells the sweep it is ours
    except OSError as exc:
        raise _fail(parent, f"cannot create a temporary directory: {exc.strerror}") from None
    written, unchanged = [], []
    saved = current = ""
    seen: set[str] = set()
    old: dict[str, str] = {}
    overwritten: list[str] = []
    replaced = False
    try:
        if existed:
            old = replaceable(target, force, kind)
        snap, snap_dirs = snapshot(target, old)
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
        # edited by hand (an empty recorded hash) and not linked as unchanged: lost unless kept
        overwritten = sorted(
            {r for r, sha in old.items() if not sha and r != MARKER} - set(unchanged)
        )
        present = os.path.isdir(target)  # a directory made meanwhile is checked as well
        if present:
            keeps_inputs(target, old, seen)
            still_owned(target, snap, snap_dirs)  # what came while the new tree was written stays
        with _held_signals():
            if present:
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
                replaced = True
                # the old tree: owned files go, the overwritten edits are kept
                gone = {rel: s for rel, s in snap.items() if rel not in overwritten}
                saved = discard(parent, base, tmp, gone)
            else:
                os.rename(tmp, target)
                replaced = True
    except OSError as exc:
        if not replaced:
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
    except BaseException as exc:
        if not replaced:
            shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            _note(exc, shown, replaced, existed)
        raise
    removed = tuple(sorted(set(old) - seen))
    late = bool(saved) and _holds_more(saved, overwritten)
    return WriteResult(
        target,
        tuple(sorted(written)),
        tuple(sorted(unchanged)),
        removed,
        saved if late else "",
        overwritten=tuple(overwritten),
        kept=saved if overwritten else "",
    )


def _holds_more(saved: str, overwritten: Iterable[str]) -> bool:
    """Whether the directory of kept files ``saved`` holds any file but ``overwritten``: one
    that came into the old tree at the very swap."""
    expected = set(overwritten)
    for root, _dirs, names in os.walk(saved):
        if any(os.path.relpath(os.path.join(root, n), saved) not in expected for n in names):
            return True
    return False


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
