"""Where a finding points: the line of a route entry, a ``net type:`` or the ``routing:``
section in an lnetctl YAML file, or the ``routes=`` / ``networks=`` / ``forwarding=`` parameter
of a modprobe file.

The live readers keep the states, not the marks of every entry, so a file is scanned again here
-- only files that have a finding, each once.  The scan reads the layouts ``lnetctl export`` and
``lnetgen generate`` write; anything it cannot place is located at the file (line 0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lnetgen import nodes
from lnetgen.live import LiveParseError
from lnetgen.live.files import read_bytes

_KEY = re.compile(r"^(\s*)(?:-\s+)?([A-Za-z_][A-Za-z0-9_ ()]*):\s*(.*?)\s*$")


@dataclass(frozen=True)
class Place:
    """A line and column (1-based; 0 = unknown) and a JSON path into the file."""

    line: int = 0
    col: int = 0
    path: str = "$"


@dataclass
class _RouteEntry:
    index: int
    line: int
    net: str = ""
    gateway: str = ""
    gateway_line: int = 0
    gateway_col: int = 0


def _canon_net(text: str) -> str:
    try:
        return nodes.canonical_net(text.strip())
    except nodes.NodeSyntaxError:
        return text.strip()


def _canon_nid(text: str) -> str:
    try:
        return str(nodes.parse_nid(text.strip()))
    except nodes.NodeSyntaxError:
        return text.strip()


class Locator:
    """Finds places in files, reading each file once; with ``root``, files in that directory,
    read without following a symbolic link out of it."""

    def __init__(self, root: str = "") -> None:
        self._lines: dict[str, list[str]] = {}
        self._root = root

    def lines(self, file: str) -> list[str]:
        """The lines of ``file`` ([] when it cannot be read)."""
        got = self._lines.get(file)
        if got is None:
            try:
                got = read_bytes(file, self._root).decode("utf-8", "replace").split("\n")
            except (OSError, LiveParseError):
                got = []
            self._lines[file] = got
        return got

    def _modprobe(self, file: str) -> bool:
        return file.endswith(".conf") or any(
            ln.lstrip().startswith("options ") for ln in self.lines(file)
        )

    def _param(self, file: str, name: str, needle: str = "") -> Place:
        for n, text in enumerate(self.lines(file), 1):
            at = text.find(f"{name}=")
            if at >= 0:
                hit = text.find(needle, at) if needle else -1
                return Place(n, (hit if hit >= 0 else at) + 1, f"$.{name}")
        return Place()

    def section(self, file: str, key: str) -> Place:
        """The line of the top-level ``key:`` (``route``, ``net``, ``routing``)."""
        if self._modprobe(file):
            param = {"route": "routes", "net": "networks", "routing": "forwarding"}.get(key, key)
            return self._param(file, param)
        for n, text in enumerate(self.lines(file), 1):
            if text.startswith(f"{key}:"):
                return Place(n, 1, f"$.{key}")
        return Place()

    def net(self, file: str, net: str) -> Place:
        """The ``net type:`` entry of ``net`` (else the ``net:`` section)."""
        if self._modprobe(file):
            return self._param(file, "networks", net)
        index = -1
        section = ""
        for n, text in enumerate(self.lines(file), 1):
            m = _KEY.match(text)
            if m is None:
                continue
            if not m.group(1) and not text.startswith("-"):
                section = m.group(2)
            elif section == "net" and m.group(2) == "net type":
                index += 1
                if _canon_net(m.group(3)) == net:
                    return Place(n, text.index("net type") + 1, f"$.net[{index}]")
        return self.section(file, "net")

    def _routes(self, file: str) -> list[_RouteEntry]:
        out: list[_RouteEntry] = []
        section = ""
        for n, text in enumerate(self.lines(file), 1):
            m = _KEY.match(text)
            if m is None:
                continue
            if not m.group(1) and not text.startswith("-"):
                section = m.group(2)
                continue
            if section != "route":
                continue
            if text.lstrip().startswith("-"):
                out.append(_RouteEntry(len(out), n))
            if not out:
                continue
            key, value = m.group(2), m.group(3)
            if key == "net":
                out[-1].net = _canon_net(value)
            elif key == "gateway":
                out[-1].gateway = _canon_nid(value)
                out[-1].gateway_line, out[-1].gateway_col = n, text.index("gateway") + 1
        return out

    def route(self, file: str, net: str, gateway: str) -> Place:
        """The route entry to ``net`` through ``gateway`` (its ``gateway:`` line), else the
        first entry to ``net``, else the ``route:`` section."""
        if self._modprobe(file):
            addr = gateway.rpartition("@")[0]
            return self._param(file, "routes", addr or net)
        first: _RouteEntry | None = None
        for e in self._routes(file):
            if e.net != net:
                continue
            if e.gateway == gateway:
                return Place(e.gateway_line, e.gateway_col, f"$.route[{e.index}]")
            first = first or e
        if first is not None:
            return Place(first.line, 1, f"$.route[{first.index}]")
        return self.section(file, "route")
