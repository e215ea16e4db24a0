"""Writing one output file (``solve --out``, ``report --out``, ``verify --ping-plan``, ``fabric
... --out``): atomically for a regular or new file (a temporary beside it, then a rename), as a
stream for a terminal, ``/dev/null`` or a named pipe, never over a file this run read as input
(``lnetgen.inputs``), and never into a disk, a socket, the pipe this run reads as standard
input or through a link to a regular file.  A named pipe's reader is waited for at most
``FIFO_WAIT`` seconds, and a regular file replaced keeps its permissions.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import time
from contextlib import suppress

from lnetgen import inputs
from lnetgen.diagnostics import Diagnostic, UsageError
from lnetgen.leftovers import PREFIX


def _fail(path: str, msg: str) -> UsageError:
    return UsageError([Diagnostic(path, 0, 0, "error", "E-OUTPUT", "$", msg)])


#: Seconds a single-file output that is a named pipe waits for its reader to open it; then
#: the write is refused instead of hanging (``mkfifo p; lnetgen solve --out p`` with nobody
#: reading ``p`` waited forever).
FIFO_WAIT = 5.0


def _stream_kind(mode: int) -> str | None:
    """What a non-regular output is, when lnetgen writes to it as a stream (a terminal or
    ``/dev/null``, a named pipe); None for what it refuses (a block device is a disk)."""
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    return None


def _refuse_special(path: str, mode: int) -> UsageError:
    if stat.S_ISDIR(mode):
        return _fail(path, "output path is a directory")
    if stat.S_ISBLK(mode):
        return _fail(
            path, "output path is a block device (a disk); lnetgen writes files, never a device"
        )
    if stat.S_ISSOCK(mode):
        return _fail(path, "output path is a socket, which cannot be written as a file")
    return _fail(path, "output path is not a regular file, a named pipe or a terminal")


def _open_stream(path: str, fifo: bool) -> int:
    """A write descriptor of the named pipe or character device ``path``, opened without
    creating, truncating or blocking: a pipe nobody reads is retried for ``FIFO_WAIT`` seconds
    and then refused (a device that waits for a carrier cannot block either).  What the
    descriptor turns out to be is checked again: a regular file put in the path's place after
    it was looked at is never written into."""
    deadline = time.monotonic() + FIFO_WAIT
    flags = os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    while True:
        try:
            fd = os.open(path, flags)
            break
        except OSError as exc:
            if not fifo or exc.errno != errno.ENXIO or time.monotonic() >= deadline:
                why = (
                    f"nobody opened the named pipe for reading within {FIFO_WAIT:g} s; "
                    "start its reader first"
                    if fifo and exc.errno == errno.ENXIO
                    else f"cannot write: {exc.strerror or exc}"
                )
                raise _fail(path, why) from None
            time.sleep(0.02)
    mode = os.fstat(fd).st_mode
    if _stream_kind(mode) is None:
        os.close(fd)
        raise (
            _refuse_special(path, mode)
            if not stat.S_ISREG(mode)
            else _fail(
                path, "output path changed into a regular file while it was opened; run again"
            )
        )
    os.set_blocking(fd, True)  # the reader is there: writes wait for it as a pipe does
    return fd


def _is_stdin(path: str) -> bool:
    """Whether ``path`` (followed) is the pipe this process reads as standard input
    (``--out /dev/stdin``)."""
    try:
        st, stdin = os.stat(path), os.fstat(0)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (stdin.st_dev, stdin.st_ino)


def write_file(path: str, text: str) -> None:
    """Write one file: atomically (temporary file beside it, then rename) for a regular or new
    file; as a stream for a character device (a terminal, ``/dev/null``) or a named pipe
    (``--out /dev/stdout`` into a pipe), which is never replaced, and whose reader is waited
    for at most ``FIFO_WAIT`` seconds.  A symbolic link to anything else, a block device, a
    socket or a directory is refused, and so is a path that ends with a slash (``-o sub/`` for
    a directory that does not exist wrote a file named ``sub``)."""
    try:
        followed = os.stat(path).st_mode  # through links, /proc/self/fd/1 -> a pipe included
    except (OSError, ValueError):
        followed = 0
    if path.endswith(("/", os.sep)) and not followed:
        raise _fail(path, "output path ends with a slash, which names a directory; give a file")
    if os.path.islink(path) and _stream_kind(followed) is None:
        real = os.path.realpath(path)
        raise _fail(path, f"output path is a symbolic link (to {real}); give the real path")
    if inputs.is_input(path):
        raise _fail(path, "output path is an input of this run; give another path")
    data = text.encode("utf-8")
    if followed and not stat.S_ISREG(followed):
        if _stream_kind(followed) is None:
            raise _refuse_special(path, followed)
        if stat.S_ISFIFO(followed) and _is_stdin(path):  # its reader is this run: it hung
            raise _fail(path, "output path is this run's standard input; give another path")
        fd = _open_stream(path, stat.S_ISFIFO(followed))
        try:
            with open(fd, "wb", closefd=True) as fh:
                fh.write(data)
        except OSError as exc:
            raise _fail(path, f"cannot write: {exc.strerror or exc}") from None
        return
    path = os.path.abspath(path)
    parent = os.path.dirname(path)
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}{PREFIX}", dir=parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        # a file replaced keeps its permissions: a private (0600) plan stays private
        os.chmod(tmp, stat.S_IMODE(followed) & 0o777 if followed else 0o644)
        os.replace(tmp, path)
        tmp = ""
    except OSError as exc:
        raise _fail(path, f"cannot write: {exc.strerror or exc}") from None
    finally:  # also when the run is stopped (SIGTERM, Ctrl-C) while it writes
        if tmp:
            with suppress(OSError):
                os.unlink(tmp)
