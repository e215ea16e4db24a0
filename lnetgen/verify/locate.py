"""Where a finding points: the line of a route entry, a ``net type:`` or the ``routing:``
section in an lnetctl YAML file, or the ``routes=`` / ``networks=`` / ``forwarding=`` parameter
of a modprobe file.

The live readers keep the states, not the marks of every entry, so a file is scanned again here
-- only files that have a finding, each part once, into an index every later finding in the
file is looked up in (a file with thousands of wrong routes is not read once per route).  The
scan reads the layouts ``lnetctl export`` and ``lnetgen generate`` write; anything it cannot
place is located at the file (line 0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lnetgen import nodes
from lnetgen.live import LiveParseError
from lnetgen.live.files import read_bytes
from lnetgen.verify.textfind import Finder

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


@dataclass
class _Index:
    """What locating reads of one file, each part built on first use and kept: the lines,
    whether it is a modprobe file, the first line of each top-level key and of each
    ``name=`` parameter, the ``net type:`` entries and the route entries by net and gateway.
    Locating a finding is then a look-up, not a scan of the file."""

    lines: list[str]
    modprobe: bool | None = None
    sections: dict[str, Place] = field(default_factory=dict)
    params: dict[str, tuple[int, int, Finder | None]] = field(default_factory=dict)
    nets: dict[str, Place] | None = None
    #: net -> (its first entry, gateway -> the first entry to the net through it)
    routes: dict[str, tuple[_RouteEntry, dict[str, _RouteEntry]]] | None = None


class Locator:
    """Finds places in files, reading and indexing each file once; with ``root``, files in
    that directory, read without following a symbolic link out of it."""

    def __init__(self, root: str = "") -> None:
        self._files: dict[str, _Index] = {}
        self._root = root

    def _file(self, file: str) -> _Index:
        got = self._files.get(file)
        if got is None:
            try:
                lines = read_bytes(file, self._root).decode("utf-8", "replace").split("\n")
            except (OSError, LiveParseError):
                lines = []
            got = self._files[file] = _Index(lines)
        return got

    def lines(self, file: str) -> list[str]:
        """The lines of ``file`` ([] when it cannot be read)."""
        return self._file(file).lines

    def _modprobe(self, file: str) -> bool:
        ix = self._file(file)
        if ix.modprobe is None:
            ix.modprobe = file.endswith(".conf") or any(
                ln.lstrip().startswith("options ") for ln in ix.lines
            )
        return ix.modprobe

    def _param(self, file: str, name: str, needle: str = "") -> Place:
        ix = self._file(file)
        got = ix.params.get(name)
        if got is None:
            got = (0, 0, None)
            for n, text in enumerate(ix.lines, 1):
                at = text.find(f"{name}=")
                if at >= 0:
                    got = (n, at, Finder(text))
                    break
            ix.params[name] = got
        n, at, finder = got
        if finder is None:
            return Place()
        hit = finder.find(needle, at) if needle else -1
        return Place(n, (hit if hit >= 0 else at) + 1, f"$.{name}")

    def section(self, file: str, key: str) -> Place:
        """The line of the top-level ``key:`` (``route``, ``net``, ``routing``)."""
        if self._modprobe(file):
            param = {"route": "routes", "net": "networks", "routing": "forwarding"}.get(key, key)
            return self._param(file, param)
        ix = self._file(file)
        got = ix.sections.get(key)
        if got is None:
            got = next(
                (
                    Place(n, 1, f"$.{key}")
                    for n, text in enumerate(ix.lines, 1)
                    if text.startswith(f"{key}:")
                ),
                Place(),
            )
            ix.sections[key] = got
        return got

    def net(self, file: str, net: str) -> Place:
        """The ``net type:`` entry of ``net`` (else the ``net:`` section)."""
        if self._modprobe(file):
            return self._param(file, "networks", net)
        ix = self._file(file)
        if ix.nets is None:
            ix.nets = {}
            index = -1
            section = ""
            for n, text in enumerate(ix.lines, 1):
                m = _KEY.match(text)
                if m is None:
                    continue
                if not m.group(1) and not text.startswith("-"):
                    section = m.group(2)
                elif section == "net" and m.group(2) == "net type":
                    index += 1
                    place = Place(n, text.index("net type") + 1, f"$.net[{index}]")
                    ix.nets.setdefault(_canon_net(m.group(3)), place)
        got = ix.nets.get(net)
        return got if got is not None else self.section(file, "net")

    def _routes(self, ix: _Index) -> dict[str, tuple[_RouteEntry, dict[str, _RouteEntry]]]:
        """The route entries of the ``route:`` section by net, then by gateway (built once)."""
        if ix.routes is not None:
            return ix.routes
        out: list[_RouteEntry] = []
        section = ""
        for n, text in enumerate(ix.lines, 1):
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
        ix.routes = {}
        for e in out:
            _first, by_gateway = ix.routes.setdefault(e.net, (e, {}))
            by_gateway.setdefault(e.gateway, e)
        return ix.routes

    def route(self, file: str, net: str, gateway: str) -> Place:
        """The route entry to ``net`` through ``gateway`` (its ``gateway:`` line), else the
        first entry to ``net``, else the ``route:`` section."""
        if self._modprobe(file):
            addr = gateway.rpartition("@")[0]
            return self._param(file, "routes", addr or net)
        got = self._routes(self._file(file)).get(net)
        if got is None:
            return self.section(file, "route")
        first, by_gateway = got
        e = by_gateway.get(gateway)
        if e is not None:
            return Place(e.gateway_line, e.gateway_col, f"$.route[{e.index}]")
        return Place(first.line, 1, f"$.route[{first.index}]")
