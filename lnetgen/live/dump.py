"""One dump to one ``HostState``: the format recognized by content, then read by its reader.

Accepted dumps (the file name only names the host):

* ``lnetctl export`` and ``lnetctl export --backup`` YAML, and ``/etc/lnet.conf`` files such as
  ``lnetgen generate`` writes: networks, routes, routing (sequence or mapping form), peers;
* ``lnetctl route show [-v]``, ``lnetctl net show [-v]`` and ``lnetctl routing show`` YAML;
* ``lctl get_param -n routes`` (the ``Routing enabled`` table) and ``lctl show_route``;
* modprobe files with ``options lnet networks=... routes=... forwarding=...`` lines.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from lnetgen.live.cache import ParseCache
from lnetgen.live.errors import EntryError, LiveParseError, decode, diag
from lnetgen.live.files import read_bytes
from lnetgen.live.lctl import SHOW_ROUTE, parse_lctl_routes, parse_show_route
from lnetgen.live.lnetctl import parse_yaml
from lnetgen.live.modprobe import MODPROBE_WORDS, parse_modprobe
from lnetgen.live.state import HostState

#: The first line that is neither blank nor a ``#`` comment, found in one pass of the regular
#: expression engine (a loop over lines took minutes on a file of 64 Mi empty lines).
_FIRST_LINE = re.compile(rb"^[ \t\r\f\v]*([^\s#][^\n]*)", re.M)


def _first_line(data: bytes) -> bytes:
    """The first line that is neither blank nor a ``#`` comment (stripped)."""
    m = _FIRST_LINE.search(data)
    return m.group(1).strip() if m else b""


def detect_format(data: bytes | str) -> str:
    """Which family a dump belongs to: ``yaml``, ``lctl-routes``, ``lctl-show-route``,
    ``modprobe``, or ``''`` when it is empty."""
    if isinstance(data, str):
        data = data.encode()
    first = _first_line(data)
    if not first:
        return ""
    if first.startswith((b"Routing ", b"routes=")):
        return "lctl-routes"
    if SHOW_ROUTE.match(first.decode("utf-8", "replace")):
        return "lctl-show-route"
    if first.split(None, 1)[0].decode("utf-8", "replace") in MODPROBE_WORDS:
        return "modprobe"
    return "yaml"


_TEXT_PARSERS: dict[str, Callable[[str], HostState]] = {
    "lctl-routes": parse_lctl_routes,
    "lctl-show-route": parse_show_route,
    "modprobe": parse_modprobe,
}


def _parse(data: bytes, file: str, cache: ParseCache) -> HostState:
    """The state of one dump; raises ``LiveParseError`` or ``EntryError`` (without a host)."""
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise LiveParseError(
            diag(file, line, 0, "binary data (NUL byte); expected a text dump", "E-LIVE-BINARY")
        )
    kind = detect_format(data)
    if not kind:
        raise LiveParseError(diag(file, 0, 0, "the dump is empty", "E-LIVE-EMPTY"))
    if kind == "yaml":
        return parse_yaml(data, file, cache)
    cached = cache.texts.get((kind, data))
    if cached is None:
        cached = _TEXT_PARSERS[kind](decode(data))
        cache.texts[(kind, data)] = cached
        cache.remember(len(data))
    return dataclasses.replace(cached, sources=(file,))


def parse_dump(
    data: bytes | str, file: str, *, host: str = "", cache: ParseCache | None = None
) -> HostState:
    """Parse one dump of any accepted format into a ``HostState``.

    Raises ``LiveParseError`` naming ``file`` and the line (and ``host`` when given).
    """
    if isinstance(data, str):
        data = data.encode()
    try:
        return _parse(data, file, cache if cache is not None else ParseCache())
    except EntryError as exc:
        raise LiveParseError(
            diag(file, exc.line, exc.col, exc.message, host=host, path=exc.path)
        ) from None
    except MemoryError:
        # a dump near the size limit parses into ~25 times its size; what was built is freed
        # on the way out, so the other dumps are still read
        raise LiveParseError(
            diag(
                file,
                0,
                0,
                f"the dump ({len(data)} bytes) is too big to parse in the memory available",
                "E-LIVE-SIZE",
                host,
            )
        ) from None
    except LiveParseError as exc:
        d = exc.diagnostic
        if host and not d.message.startswith("host "):
            raise LiveParseError(
                dataclasses.replace(d, message=f"host {host}: {d.message}")
            ) from None
        raise


def read_dump(
    path: str, *, host: str = "", cache: ParseCache | None = None, root: str = ""
) -> HostState:
    """Read the dump file ``path`` (a regular file of at most ``MAX_FILE_BYTES``) into a
    ``HostState``.

    Raises ``LiveParseError`` when the file cannot be read (``E-LIVE-READ``, ``E-LIVE-SIZE``)
    or parsed; ``host``, when given, leads every message but those refusing the file's kind
    or size.  With ``root``, a symbolic link leading outside that directory is refused
    (``E-LIVE-LINK``) instead of followed.
    """
    return read_dump_bytes(path, host=host, cache=cache, root=root)[0]


def read_dump_bytes(
    path: str, *, host: str = "", cache: ParseCache | None = None, root: str = ""
) -> tuple[HostState, bytes]:
    """``read_dump``, with the bytes read (a generated tree checks them against the sha256 its
    manifest records)."""
    try:
        data = read_bytes(path, root)
    except OSError as exc:
        raise LiveParseError(
            diag(path, 0, 0, f"cannot read: {exc.strerror or exc}", "E-LIVE-READ", host)
        ) from None
    return parse_dump(data, path, host=host, cache=cache), data
