"""Which files are read as dumps, and how: the host a file name names, and a bounded read of
regular files only (a pipe or a device is refused before it is opened for reading), never
through a symbolic link out of the directory the file was found in."""

from __future__ import annotations

import errno
import os
import stat

from lnetgen import inputs, nodes
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


def _refused(path: str, why: str) -> LiveParseError:
    return LiveParseError(diag(path, 0, 0, f"not read: {why}", "E-LIVE-LINK"))


def _parts(path: str, root: str) -> list[str]:
    """The names from ``root`` down to ``path`` (``lnetctl``, ``rtr01.yaml``)."""
    parts = [p for p in os.path.relpath(path, root).split(os.sep) if p not in ("", ".")]
    if ".." in parts:
        raise LiveParseError(
            diag(path, 0, 0, "not read: the path leaves the directory", "E-LIVE-READ")
        )
    return parts


def _mode_at(name: str, dir_fd: int) -> int:
    """The mode of ``name`` in ``dir_fd``, of the link itself when it is one."""
    return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode


def _open_at(name: str, dir_fd: int, path: str, flags: int) -> int:
    """``open(name, flags | O_NOFOLLOW)`` in ``dir_fd``: a link put in place after the check
    is refused, not followed (``ELOOP``; ``ENOTDIR`` with ``O_DIRECTORY``)."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (
            exc.errno == errno.ENOTDIR
            and stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        ):
            raise _refused(path, "a symbolic link appeared while it was read") from None
        raise


def _open_below(path: str, root: str, parts: list[str], final_link: bool) -> int:
    """A descriptor of the regular file ``root/parts...`` (``path``), opened one name at a time
    from a descriptor of ``root`` without following any link below ``root``; with
    ``final_link``, a link as the last name is followed when it stays inside ``root``."""
    if not parts:
        raise _not_regular(path, stat.S_IFDIR)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)  # the directory the user named
    try:
        for i, name in enumerate(parts[:-1]):
            if stat.S_ISLNK(_mode_at(name, fd)):
                raise _refused(
                    path,
                    f"'{shown(os.path.join(*parts[: i + 1]))}' is a symbolic link; links to "
                    "directories are not followed below the directory given",
                )
            old, fd = fd, _open_at(name, fd, path, os.O_RDONLY | os.O_DIRECTORY)
            os.close(old)
        mode = _mode_at(parts[-1], fd)
        if stat.S_ISLNK(mode):
            where = outside(path, root) if final_link else "elsewhere while it was read"
            if where is not None:
                raise _refused(
                    path,
                    f"a symbolic link that leads {where}; links may only point inside the "
                    "directory given",
                )
            # realpath resolved every link of the target: it is opened link-free
            target = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
            return _open_below(path, root, _parts(os.path.join(root, target), root), False)
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        # non-blocking: a pipe put in the file's place after the check cannot hang the open
        return _open_at(parts[-1], fd, path, os.O_RDONLY | os.O_NONBLOCK)
    finally:
        os.close(fd)


def read_bytes(path: str, root: str = "") -> bytes:
    """The bytes of the regular file ``path``, at most ``MAX_FILE_BYTES`` of them.

    Anything else is refused before it is read: a named pipe would wait for a writer forever
    and a device such as ``/dev/zero`` never ends (its size reads 0).  With ``root`` (a
    directory ``path`` lies in), no symbolic link below ``root`` is followed out of it: a
    directory between ``root`` and the file that is a link is refused, and the file itself
    may be a link only to a file inside ``root`` (``E-LIVE-LINK``); ``root`` itself is
    followed.  Raises ``LiveParseError`` (``E-LIVE-READ``, ``E-LIVE-SIZE``, ``E-LIVE-LINK``)
    or ``OSError``.
    """
    if root:
        fd = _open_below(path, root, _parts(path, root), True)
    else:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode)
        # non-blocking: a pipe put in the file's place after the check cannot hang the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with open(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode)
        inputs.remember(st)  # no output of this run may replace it (verify --ping-plan)
        if st.st_size > MAX_FILE_BYTES:
            raise _too_big(path, f"file is {st.st_size} bytes")
        data = read_at_most(fh, MAX_FILE_BYTES)
    if len(data) > MAX_FILE_BYTES:
        raise _too_big(path, "file grew while it was read")
    return data
