"""The files this process has read as input, so that no output replaces one.

``lnetgen solve site.yaml --out site.yaml`` replaced the inventory by the plan, and ``report``
and ``fabric export`` did the same with ``-o``.  Every reader of a user's file (the YAML and
text reader, the plan reader) calls :func:`remember`; every writer of a single file asks
:func:`is_input` before it replaces anything.  A file is known by its device, inode, size and
modification time, so a hard link to the inventory is caught as well, and an inode that was
freed and reused by another file is not mistaken for it.  The record lasts as long as the
process (one command); a long-lived program that means to replace a file it read calls
:func:`forget` first.
"""

from __future__ import annotations

import os

_SEEN: set[tuple[int, int, int, int]] = set()


def _key(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def remember(st: os.stat_result) -> None:
    """Note a regular file read as input, by the ``stat`` taken when it was opened."""
    _SEEN.add(_key(st))


def is_input(path: str) -> bool:
    """Whether ``path`` (followed if a link) is a file this process read as input."""
    try:
        return _key(os.stat(path)) in _SEEN
    except OSError:
        return False


def forget() -> None:
    """Drop the record: nothing read so far is protected any more."""
    _SEEN.clear()
