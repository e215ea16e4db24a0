"""Atomic, write-if-changed output trees.

``write_tree(target, files)`` builds the complete new tree in a temporary directory beside
``target``, hard-links files whose content did not change to the old copies (so their inode and
mtime stay as they were and rsync/Ansible see no change), then swaps the two directories with
one ``renameat2(RENAME_EXCHANGE)`` on Linux (two renames elsewhere).  Whatever happens, a reader
sees either the whole old tree or the whole new one.  Leftover temporary directories of an
interrupted run are removed by the next successful one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass

from lnetgen.diagnostics import Diagnostic, InputError

MARKER = "manifest.json"  # a directory lnetgen wrote always has one
_PREFIX = ".lnetgen-"


@dataclass(frozen=True)
class WriteResult:
    target: str
    written: tuple[str, ...]  # relative paths whose content is new or changed
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]


def _fail(path: str, msg: str) -> InputError:
    return InputError([Diagnostic(path, 0, 0, "error", "E-OUTPUT", "$", msg)])


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


def _old_files(target: str) -> dict[str, str]:
    out = {}
    for root, _dirs, files in os.walk(target):
        for f in files:
            full = os.path.join(root, f)
            out[os.path.relpath(full, target)] = full
    return out


def write_tree(target: str, files: Iterable[tuple[str, str]]) -> WriteResult:
    """Replace directory ``target`` by exactly ``files`` (relative path, text)."""
    files = list(files)
    target = os.path.abspath(target)
    parent = os.path.dirname(target)
    base = os.path.basename(target)
    if os.path.exists(target) and not os.path.isdir(target):
        raise _fail(target, "output path exists and is not a directory")
    if (
        os.path.isdir(target)
        and os.listdir(target)
        and not os.path.exists(os.path.join(target, MARKER))
    ):
        raise _fail(
            target,
            "refusing to replace a non-empty directory that lnetgen did not "
            f"write (no {MARKER}); choose an empty or new directory",
        )
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        raise _fail(parent, f"cannot create: {exc.strerror}") from None
    old = _old_files(target) if os.path.isdir(target) else {}
    try:
        tmp = tempfile.mkdtemp(prefix=f".{base}{_PREFIX}", dir=parent)
    except OSError as exc:
        raise _fail(parent, f"cannot create a temporary directory: {exc.strerror}") from None
    written, unchanged = [], []
    try:
        for rel, text in sorted(files):
            rel = _safe_rel(rel)
            dest = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            data = text.encode("utf-8")
            prev = old.get(rel)
            if prev is not None and _same(prev, data):
                os.link(prev, dest)
                unchanged.append(rel)
                continue
            with open(dest, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(dest, 0o644)
            written.append(rel)
        os.chmod(tmp, 0o755)
        if os.path.isdir(target):
            if not _exchange(tmp, target):
                aside = tempfile.mkdtemp(prefix=f".{base}{_PREFIX}old-", dir=parent)
                os.rmdir(aside)
                os.rename(target, aside)
                os.rename(tmp, target)
                tmp = aside
            shutil.rmtree(tmp, ignore_errors=True)  # now holds the old tree
        else:
            os.rename(tmp, target)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _fail(target, f"cannot write output: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _sweep(parent, base)
    removed = tuple(sorted(set(old) - {rel for rel, _ in files}))
    return WriteResult(target, tuple(written), tuple(unchanged), removed)


def _same(path: str, data: bytes) -> bool:
    try:
        if os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as fh:
            return fh.read() == data
    except OSError:
        return False


def _sweep(parent: str, base: str) -> None:
    """Remove temporary trees an interrupted run left beside the target."""
    prefix = f".{base}{_PREFIX}"
    for name in os.listdir(parent):
        if name.startswith(prefix):
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)


def write_file(path: str, text: str) -> None:
    """Write one file atomically (temporary file beside it, then rename)."""
    path = os.path.abspath(path)
    parent = os.path.dirname(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}{_PREFIX}", dir=parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        raise _fail(path, f"cannot write: {exc.strerror or exc}") from None
