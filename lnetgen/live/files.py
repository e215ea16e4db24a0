"""Which files are read as dumps, and how: the host a file name names, and a bounded read of
regular files only (a pipe or a device is refused before it is opened for reading)."""

from __future__ import annotations

import os
import stat

from lnetgen import nodes
from lnetgen.bounded import read_at_most
from lnetgen.live.errors import LiveParseError, clip, diag, shown

#: Refuse a single dump larger than this (an lnetctl export of a big FGR client is ~200 KB).
MAX_FILE_BYTES = 64 * 1024 * 1024


def host_of(file_name: str) -> str:
    """The host a dump is named after: ``nid00042.yaml`` and ``nid00042.net.txt`` ->
    ``nid00042`` (host names hold no dots).

    Raises ``LiveParseError`` (``E-LIVE-NAME``, naming the file) when the name does not start
    with a host name (``nodes.HOSTNAME_RE``: letters, digits and ``-``) or holds characters that
    cannot be printed; such a name is never taken for a host, folded or printed as it is.
    """
    base = os.path.basename(file_name)
    host = base.split(".", 1)[0]
    if nodes.HOSTNAME_RE.match(host) is None:
        why = (
            f"'{clip(host)}' is not a host name (letters, digits and '-', at most 63; the "
            "host name ends at the first '.')"
        )
    elif not base.isprintable():
        why = "the file name holds characters that cannot be printed"
    else:
        return host
    raise LiveParseError(diag(shown(file_name), 0, 0, f"not read: {why}", "E-LIVE-NAME"))


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for a message (``a named pipe``)."""
    for test, what in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "a special file"


def _not_regular(path: str, mode: int) -> LiveParseError:
    return LiveParseError(
        diag(path, 0, 0, f"is {file_kind(mode)}, not a regular file", "E-LIVE-READ")
    )


def _too_big(path: str, what: str) -> LiveParseError:
    return LiveParseError(
        diag(path, 0, 0, f"{what}, over the {MAX_FILE_BYTES}-byte limit", "E-LIVE-SIZE")
    )


def outside(path: str, root: str) -> str | None:
    """Where the symbolic link ``path`` leads when that is outside directory ``root`` (or
    nowhere: a dangling or looping link), else None.  Dumps copied with ``rsync -a`` keep their
    links; one that leaves the dump directory (to ``/etc/shadow``, say) is never followed."""
    if not os.path.islink(path):
        return None
    real_root = os.path.realpath(root)
    target = os.path.realpath(path)
    try:
        os.stat(path)
    except OSError as exc:
        return f"nowhere ({exc.strerror or exc})"
    if os.path.commonpath([real_root, target]) != real_root:
        return "outside the directory"
    return None


def read_bytes(path: str, root: str = "") -> bytes:
    """The bytes of the regular file ``path``, at most ``MAX_FILE_BYTES`` of them.

    Anything else is refused before it is read: a named pipe would wait for a writer forever
    and a device such as ``/dev/zero`` never ends (its size reads 0); with ``root``, a
    symbolic link that leads outside that directory (``E-LIVE-LINK``).  Raises
    ``LiveParseError`` (``E-LIVE-READ``, ``E-LIVE-SIZE``, ``E-LIVE-LINK``) or ``OSError``.
    """
    if root:
        where = outside(path, root)
        if where is not None:
            raise LiveParseError(
                diag(
                    path,
                    0,
                    0,
                    f"not read: a symbolic link that leads {where}; links may only point "
                    "inside the dump directory",
                    "E-LIVE-LINK",
                )
            )
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode)
    if st.st_size > MAX_FILE_BYTES:
        raise _too_big(path, f"file is {st.st_size} bytes")
    # non-blocking: a pipe put in the file's place after the check cannot hang the open
    with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        data = read_at_most(fh, MAX_FILE_BYTES)
    if len(data) > MAX_FILE_BYTES:
        raise _too_big(path, "file grew while it was read")
    return data
