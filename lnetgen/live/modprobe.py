"""Reading modprobe files: the ``networks=``, ``routes=`` and ``forwarding=`` parameters of
``options lnet`` lines, with ``\\`` continuations joined and errors located at the character.

Routes the kernel would ignore (to a local net, through a gateway on no local net, a second
entry for the same net and gateway) are left out with a health note, as the kernel does.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass

from lnetgen import routestr
from lnetgen.live.errors import EntryError
from lnetgen.live.normalize import integer, route_health
from lnetgen.live.state import MODPROBE, NO_PEERS, HostState, NetTable, RouteKey, RouteTable
from lnetgen.tunables import MODPROBE_SHOWN, from_module, is_int

#: The commands a modprobe file may hold (the first word of a line).
MODPROBE_WORDS = frozenset(
    ("options", "install", "remove", "alias", "blacklist", "softdep", "include")
)


@dataclass
class Logical:
    """A modprobe line after joining ``\\`` continuations: its text, and where each physical
    line's piece of it starts (offset in ``text``) and which line that is."""

    text: str
    starts: list[int]
    lines: list[int]

    def at(self, index: int) -> tuple[int, int]:
        """(line, column) of the character at ``index`` (clamped to the text)."""
        if not self.text:
            return (0, 0)
        index = min(max(index, 0), len(self.text) - 1)
        k = bisect.bisect_right(self.starts, index) - 1
        return (self.lines[k], index - self.starts[k] + 1)


def logical_lines(text: str) -> Iterator[Logical]:
    """The logical lines of ``text``, ``#`` comment lines left out."""
    parts: list[str] = []
    starts: list[int] = []
    lines: list[int] = []
    size = 0
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        cont = line.endswith("\\")
        if cont:
            line = line[:-1]
        if not parts and line.lstrip().startswith("#"):
            continue
        parts.append(line)
        starts.append(size)
        lines.append(n)
        size += len(line)
        if not cont:
            yield Logical("".join(parts), starts, lines)
            parts, starts, lines, size = [], [], [], 0
    if parts:
        yield Logical("".join(parts), starts, lines)


def _words(text: str) -> list[tuple[int, str]]:
    """Split at white space outside double quotes; (offset, raw word)."""
    out: list[tuple[int, str]] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] in " \t":
            i += 1
            continue
        j, quoted = i, False
        while j < n and (quoted or text[j] not in " \t"):
            if text[j] == '"':
                quoted = not quoted
            j += 1
        out.append((i, text[i:j]))
        i = j
    return out


def _param(word: str) -> tuple[str, str, int]:
    """``name="value"`` -> (name, value, offset of the value within the word)."""
    if word.startswith('"') and word.endswith('"') and len(word) >= 2:
        word = word[1:-1]
        base = 1
    else:
        base = 0
    name, eq, value = word.partition("=")
    off = base + len(name) + len(eq)
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        value, off = value[1:-1], off + 1
    return name.replace("-", "_"), value, off


def _checked(name: str, value: str, logical: Logical, off: int) -> str:
    """``value``, refused (at its character) when ``lnetgen.tunables`` would read it as an
    integer and it is none (thousands of digits, fullwidth digits)."""
    if is_int(value):
        try:
            integer(value, 0, name)
        except EntryError as exc:
            line, col = logical.at(off)
            raise EntryError(line, exc.message, col) from None
    return value


_Params = dict[str, tuple[str, Logical, int]]  # name -> (value, its line, offset of the value)


def _lnet_options(text: str, others: dict[str, dict[str, str]] | None = None) -> _Params:
    """The parameters of every ``options lnet`` line; a later value replaces an earlier one.
    ``others`` collects the parameters of every other module's ``options`` lines."""
    params: _Params = {}
    seen = False
    for logical in logical_lines(text):
        words = _words(logical.text)
        if not words:
            continue
        if words[0][1] not in MODPROBE_WORDS:
            line, col = logical.at(words[0][0])
            raise EntryError(line, f"not a modprobe command: {words[0][1]!r}", col)
        if words[0][1] != "options" or len(words) < 2:
            continue
        if words[1][1].replace("-", "_") != "lnet":
            if others is not None:
                mod = others.setdefault(words[1][1].replace("-", "_"), {})
                for off, word in words[2:]:
                    name, value, voff = _param(word)
                    mod[name] = _checked(name, value, logical, off + voff)
            continue
        seen = True
        for off, word in words[2:]:
            name, value, voff = _param(word)
            # the kernel keeps the last value
            params[name] = (_checked(name, value, logical, off + voff), logical, off + voff)
    if not seen:
        raise EntryError(0, "no 'options lnet' line")
    return params


def _syntax_error(params: _Params, name: str, exc: routestr.RouteSyntaxError) -> EntryError:
    """``exc`` located at its character in the file."""
    _value, logical, off = params[name]
    line, col = logical.at(off + exc.offset)
    return EntryError(line, f"{name}=: {exc.message}", col)


def _kernel_routes(params: _Params, nets: NetTable | None) -> RouteTable:
    """``routes=`` as the kernel takes it: a route it would ignore becomes a health note."""
    if not params.get("routes", ("",))[0].strip():
        return RouteTable({})
    try:
        ordered = routestr.parse_routes_ordered(params["routes"][0])
    except routestr.RouteSyntaxError as exc:
        raise _syntax_error(params, "routes", exc) from None
    table: dict[RouteKey, tuple[int, int]] = {}
    notes: list[str] = []
    local = set(nets.nets) if nets is not None else None
    for r in ordered:
        key = (r.net, r.gateway)
        if key in table:
            if table[key] != (r.hop, r.priority):
                notes.append(
                    f"route to {r.net} via {r.gateway} given twice; the kernel keeps the first"
                )
            continue
        if local is not None and r.net in local:
            notes.append(f"route to local net {r.net} is ignored by the kernel")
            continue
        if local is not None and r.gateway.rpartition("@")[2] not in local:
            notes.append(
                f"gateway {r.gateway} is not on a local net: the kernel ignores this route"
            )
            continue
        table[key] = (r.hop, r.priority)
    return RouteTable(table, True, route_health(table, {}, True, notes))


def _forwarding(params: _Params) -> bool | None:
    """``forwarding=enabled|disabled``; ``None`` when not given (or empty)."""
    if "forwarding" not in params:
        return None
    value, logical, off = params["forwarding"]
    if value == "enabled":
        return True
    if value == "disabled":
        return False
    if value:
        line, col = logical.at(off)
        raise EntryError(line, f"forwarding={value!r} is neither 'enabled' nor 'disabled'", col)
    return None


def parse_modprobe(text: str) -> HostState:
    """The state the ``options lnet`` lines (and the LND modules' tunables) of a modprobe file
    set."""
    others: dict[str, dict[str, str]] = {}
    params = _lnet_options(text, others)
    health: list[str] = []
    nets: NetTable | None = None
    if "networks" in params:
        try:
            parsed = routestr.parse_networks(params["networks"][0])
        except routestr.RouteSyntaxError as exc:
            raise _syntax_error(params, "networks", exc) from None
        nets = NetTable({n: tuple(sorted(i)) for n, i in parsed})
    elif "ip2nets" in params:
        health.append(
            "ip2nets is not resolved (it depends on the node's addresses): networks not compared"
        )
    else:
        health.append("no networks= (LNet would default to tcp): networks not compared")
    routes = _kernel_routes(params, nets)
    routing = _forwarding(params)
    lnds = sorted({n.rstrip("0123456789") for n in (nets.nets if nets is not None else ())})
    tunables = from_module("lnet", {k: v for k, (v, _l, _o) in params.items()}, lnds)
    for module, mparams in sorted(others.items()):
        tunables.update(from_module(module, mparams, lnds))
    return HostState(
        nets,
        routes,
        routing,
        NO_PEERS,
        tuple(health),
        (),
        (MODPROBE,),
        tunables,
        MODPROBE_SHOWN,
        True,
    )
