"""Live LNet state: read what real nodes print and normalize it into one state per host.

Accepted dumps, recognized by content (the file name only names the host):

* ``lnetctl export`` and ``lnetctl export --backup`` YAML, and ``/etc/lnet.conf`` files such as
  ``lnetgen generate`` writes: networks, routes, routing (sequence or mapping form), peers;
* ``lnetctl route show [-v]``, ``lnetctl net show [-v]`` and ``lnetctl routing show`` YAML;
* ``lctl get_param -n routes`` (the ``Routing enabled`` table) and ``lctl show_route``;
* modprobe files with ``options lnet networks=... routes=... forwarding=...`` lines.

A directory holds one or more files per host, named ``<host>`` or ``<host>.<anything>``; a
directory written by ``lnetgen generate`` (it has ``manifest.json``) gives every host of every
lnetctl (else modprobe) file.  Only regular files are read, at most ``MAX_FILE_BYTES`` each, and
only under names that start with a host name: anything else is reported, never read, folded or
printed as it is.  Normalization (lnet-formats reference §4): canonical net names
(``o2ib0`` is ``o2ib``), gateway ranges expanded to single NIDs, a missing ``hop`` is -1 and a
missing ``priority`` 0, routes keyed by (net, gateway NID); route ``state``/``type`` and NI
status are not configuration and become health notes.

The YAML layouts lnetctl prints (libyaml, block style) are read by a small block parser; any
text outside that subset goes to PyYAML, which also words the syntax errors.  Parsed sections
are cached by their exact text, so 25,000 dumps that share a route table parse it once.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from lnetgen import nodes, routestr, yamlsrc
from lnetgen.diagnostics import Diagnostic, InputError

try:  # the C composer is several times faster
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

RouteKey = tuple[str, str]  # (net, gateway NID)

#: Refuse a single dump larger than this (an lnetctl export of a big FGR client is ~200 KB).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: Drop the parse cache when the text it holds grows past this.
_CACHE_BYTES = 256 * 1024 * 1024
#: Deepest nesting of YAML lists and mappings accepted (lnetctl prints about 6 levels).
MAX_DEPTH = yamlsrc.MAX_DEPTH
#: Most host names all entries of a generated tree's manifest may name together (every host
#: of a site appears once per format).
MAX_MANIFEST_HOSTS = 4_000_000

UNDEFINED_HOP = -1

# format names, as reported in HostState.formats
EXPORT = "lnetctl export"
BACKUP = "lnetctl export --backup"
CONFIG = "lnetctl YAML"
ROUTE_SHOW = "lnetctl route show"
ROUTE_SHOW_V = "lnetctl route show -v"
NET_SHOW = "lnetctl net show"
ROUTING_SHOW = "lnetctl routing show"
LCTL_ROUTES = "lctl get_param routes"
LCTL_SHOW_ROUTE = "lctl show_route"
MODPROBE = "modprobe"


class LiveParseError(Exception):
    """A dump that cannot be read; ``diagnostic`` names the file, line and problem."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.format())
        self.diagnostic = diagnostic


# ----------------------------------------------------------------------------- state


@dataclass(frozen=True, eq=False)
class RouteTable:
    """Routes of one dump: (net, gateway) -> (hop, priority).

    ``detailed`` is False when the dump lists routes without hop and priority (``lnetctl route
    show`` without ``-v``): then only presence can be compared.  Compared by identity, so that
    hosts sharing a parsed table share comparison work.
    """

    routes: Mapping[RouteKey, tuple[int, int]]
    detailed: bool = True
    health: tuple[str, ...] = ()
    shows_state: bool = False  # entries carry state/type (a full export, not --backup)


@dataclass(frozen=True, eq=False)
class NetTable:
    """Networks of one dump: net -> interfaces (sorted; ``()`` when the dump shows none), and
    net -> the NIDs shown (empty when the dump has none, e.g. an lnet.conf)."""

    nets: Mapping[str, tuple[str, ...]]
    nids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    health: tuple[str, ...] = ()


_NO_PEERS: Mapping[str, frozenset[str]] = {}


@dataclass(frozen=True)
class HostState:
    """Normalized live state of one host; ``None`` means the dump did not show that part.

    ``routing`` is True when the node forwards, False when it does not (including
    ``stopping``, a drain in progress).  ``peers`` maps a NID to every NID of its peer (from an
    export's ``peer:`` section), for gateways that discovery lists under their primary NID.
    """

    nets: NetTable | None = None
    routes: RouteTable | None = None
    routing: bool | None = None
    peers: Mapping[str, frozenset[str]] = field(default_factory=lambda: _NO_PEERS)
    health: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()

    @property
    def all_health(self) -> tuple[str, ...]:
        """Health notes of the state and of its tables, without repeats, in order."""
        seen: dict[str, None] = {}
        for part in (
            self.nets.health if self.nets else (),
            self.routes.health if self.routes else (),
            self.health,
        ):
            for note in part:
                seen.setdefault(note, None)
        return tuple(seen)


@dataclass
class LiveSet:
    """Every host read from a live PATH.

    ``hosts`` holds the hosts with at least one readable dump; ``errors`` one diagnostic per
    unreadable dump and ``error_hosts`` the hosts they belong to.  ``generated`` holds the
    manifest's site, strategy and digest when PATH is an ``lnetgen generate`` directory.
    """

    path: str
    hosts: dict[str, HostState] = field(default_factory=dict)
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    errors: list[Diagnostic] = field(default_factory=list)
    error_hosts: set[str] = field(default_factory=set)
    generated: dict[str, str] | None = None


# ----------------------------------------------------------------------------- errors


class _EntryError(Exception):
    """A problem at ``line`` (relative to the text being parsed)."""

    def __init__(self, line: int, message: str, col: int = 0) -> None:
        super().__init__(message)
        self.line = line
        self.col = col
        self.message = message


def _diag(
    file: str, line: int, col: int, message: str, code: str = "E-LIVE-PARSE", host: str = ""
) -> Diagnostic:
    prefix = f"host {host}: " if host else ""
    return Diagnostic(file, line, col, "error", code, "$", prefix + message)


# ----------------------------------------------------------------------------- block YAML


class _Map(dict[str, Any]):
    """A mapping with the line of its first key and of every key."""

    __slots__ = ("line", "lines")

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.lines: dict[str, int] = {}


class _Seq(list[Any]):
    __slots__ = ("line",)

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line


class _Unsupported(Exception):
    """The text is outside the block subset; PyYAML decides."""


_LOOPBACK = re.compile(r"lo[0-9]*")
_TAB_INDENT = re.compile(r"^ *\t", re.M)
_SPECIAL_START = frozenset("[]{}&*!|>%@`?,#")
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))


def _scalar(text: str) -> str | None:
    if text in _NULLS:
        return None
    c = text[0]
    if c == '"':
        inner = text[1:-1]
        if len(text) >= 2 and text[-1] == '"' and '"' not in inner and "\\" not in inner:
            return inner
        raise _Unsupported
    if c == "'":
        inner = text[1:-1]
        if len(text) >= 2 and text[-1] == "'" and "'" not in inner:
            return inner
        raise _Unsupported
    if (
        c in _SPECIAL_START
        or " #" in text
        or ": " in text
        or text[-1] == ":"
        or text == "-"
        or text.startswith("- ")
    ):
        raise _Unsupported
    return text


def _split_key(s: str) -> tuple[str, str]:
    p = s.find(": ")
    if p < 0:
        if s[-1] != ":":
            raise _Unsupported
        key, value = s[:-1], ""
    else:
        key, value = s[:p], s[p + 2 :].lstrip(" ")
    if not key or key[0] in _SPECIAL_START or key[0] in "'\"" or key[-1] == " " or "#" in key:
        raise _Unsupported
    return key, value


class _Block:
    """Recursive descent over [indent, line, text, is-item] tokens of block-style YAML."""

    def __init__(self, toks: list[list[Any]]) -> None:
        self.t = toks
        self.i = 0
        self.depth = 0

    def node(self, ind: int) -> Any:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Unsupported  # PyYAML's event count reports it, with the line
        value = self.seq(ind) if self.t[self.i][3] else self.map(ind)
        self.depth -= 1
        return value

    def seq(self, ind: int) -> _Seq:
        t = self.t
        n = len(t)
        out = _Seq(t[self.i][1])
        while self.i < n:
            tok = t[self.i]
            if tok[0] != ind or not tok[3]:
                break
            s = tok[2]
            rest = s[1:].lstrip(" ")
            if not rest:
                self.i += 1
                out.append(self.node(t[self.i][0]) if self.i < n and t[self.i][0] > ind else None)
                continue
            item = rest[0] == "-" and (len(rest) == 1 or rest[1] == " ")
            if item or ": " in rest or rest[-1] == ":":
                # the item's text starts a block at its own column
                tok[0], tok[2], tok[3] = ind + len(s) - len(rest), rest, item
                out.append(self.node(tok[0]))
            else:
                out.append(_scalar(rest))
                self.i += 1
        return out

    def map(self, ind: int) -> _Map:
        t = self.t
        n = len(t)
        out = _Map(t[self.i][1])
        lines = out.lines
        while self.i < n:
            tok = t[self.i]
            if tok[0] != ind or tok[3]:
                break
            key, value = _split_key(tok[2])
            if key in out:
                raise _Unsupported  # PyYAML words it (and _from_node rejects it)
            self.i += 1
            val: Any = None
            if value:
                val = _scalar(value)
            elif self.i < n:
                nxt = t[self.i]
                if nxt[0] > ind:
                    val = self.node(nxt[0])
                elif nxt[0] == ind and nxt[3]:
                    val = self.seq(ind)
            out[key] = val
            lines[key] = tok[1]
        return out


def _block_parse(text: str) -> Any:
    """Parse block-style YAML; raises ``_Unsupported`` outside the subset."""
    toks: list[list[Any]] = []
    n = 0
    for raw in text.split("\n"):
        n += 1
        body = raw.lstrip(" ")
        if not body:
            continue
        c = body[0]
        if c == "#":
            continue
        s = body.strip()
        if not s:
            continue
        if c != s[0]:  # a tab or other white space in the indentation
            raise _Unsupported
        toks.append([len(raw) - len(body), n, s, c == "-" and (len(s) == 1 or s[1] == " ")])
    if not toks:
        return None
    p = _Block(toks)
    value = p.node(toks[0][0])
    if p.i != len(toks):
        raise _Unsupported
    return value


def _from_node(node: yaml.Node, budget: list[int], depth: int = 0) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _EntryError(node.start_mark.line + 1, "document expands to too many values")
    line = node.start_mark.line + 1
    if depth > MAX_DEPTH:  # the text was checked; aliases can nest deeper (or contain themselves)
        raise _EntryError(
            line,
            f"document is nested too deeply (more than {MAX_DEPTH} levels, counting what "
            "aliases stand for)",
            node.start_mark.column + 1,
        )
    if isinstance(node, yaml.ScalarNode):
        if node.tag == "tag:yaml.org,2002:null":
            return None
        return str(node.value)
    if isinstance(node, yaml.SequenceNode):
        seq = _Seq(line)
        seq.extend(_from_node(child, budget, depth + 1) for child in node.value)
        return seq
    if isinstance(node, yaml.MappingNode):
        out = _Map(line)
        for knode, vnode in node.value:
            kline = knode.start_mark.line + 1
            if not isinstance(knode, yaml.ScalarNode):
                raise _EntryError(
                    kline, "mapping keys must be plain strings", knode.start_mark.column + 1
                )
            key = str(knode.value)
            if key in out:
                raise _EntryError(
                    kline,
                    f"duplicate key {key!r} (first at line {out.lines[key]})",
                    knode.start_mark.column + 1,
                )
            out[key] = _from_node(vnode, budget, depth + 1)
            out.lines[key] = kline
        return out
    raise _EntryError(line, "unsupported YAML node")  # pragma: no cover


def _yaml_parse(text: str) -> Any:
    """Block parser first, PyYAML for anything else; raises ``_EntryError`` (relative lines)."""
    try:
        return _block_parse(text)
    except _Unsupported:
        pass
    tab = _TAB_INDENT.search(text)
    if tab:
        raise _EntryError(
            text.count("\n", 0, tab.start()) + 1,
            "tab character in the indentation (YAML indents with spaces only)",
        )
    try:
        # PyYAML's C composer recurses once per level and overflows the C stack (a crash) on
        # deep nesting: count the parser's events first
        yamlsrc._check_depth(text, "")
        docs = list(yaml.compose_all(text, Loader=_Loader))
    except InputError as exc:  # from _check_depth
        d = exc.diagnostics[0]
        raise _EntryError(d.line, d.message, d.col) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or str(exc)
        if exc.context:
            problem += f" ({exc.context})"
        raise _EntryError(
            mark.line + 1 if mark else 0,
            f"YAML syntax error: {problem}",
            mark.column + 1 if mark else 0,
        ) from None
    except yaml.YAMLError as exc:
        raise _EntryError(0, f"YAML error: {exc}") from None
    except RecursionError:
        raise _EntryError(0, "YAML nested too deeply") from None
    docs = [d for d in docs if d is not None]
    if not docs:
        return None
    values = [_from_node(d, [1_000_000]) for d in docs]
    if len(values) == 1:
        return values[0]
    merged = _Map(values[0].line if isinstance(values[0], _Map) else 1)
    for v in values:
        if not isinstance(v, _Map):
            raise _EntryError(getattr(v, "line", 1), "expected a mapping of lnetctl sections")
        for k, item in v.items():
            if k in merged:
                raise _EntryError(v.lines[k], f"section {k!r} appears twice")
            merged[k] = item
            merged.lines[k] = v.lines[k]
    return merged


# ----------------------------------------------------------------------------- normalizers


def _int(value: Any, line: int, what: str) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise _EntryError(line, f"{what} {value!r} is not an integer") from None


def _items(value: Any, section: str, line: int) -> list[_Map]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _EntryError(line, f"'{section}:' should be a sequence of entries")
    out = []
    for item in value:
        if not isinstance(item, _Map):
            raise _EntryError(
                getattr(item, "line", line),
                f"'{section}:' entries should be mappings, got {item!r}",
            )
        out.append(item)
    return out


def _canonical_nid(text: str, line: int, what: str) -> str:
    try:
        return str(nodes.parse_nid(text.strip()))
    except nodes.NodeSyntaxError as exc:
        raise _EntryError(line, f"bad {what}: {exc}") from None


def _interfaces(value: Any, line: int) -> list[str]:
    if value is None:
        return []
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (0, int(k)) if str(k).isdigit() else (1, str(k)))
        vals = [value[k] for k in keys]
    elif isinstance(value, list):
        vals = list(value)
    else:
        vals = [value]
    out = []
    for v in vals:
        if not isinstance(v, str) or not v:
            raise _EntryError(line, f"bad interface {v!r}")
        out.append(v)
    return out


def _norm_nets(value: Any, line: int) -> NetTable:
    nets: dict[str, set[str]] = {}
    nids: dict[str, list[str]] = {}
    health: list[str] = []
    for item in _items(value, "net", line):
        iline = item.line
        ntype = item.get("net type")
        if not isinstance(ntype, str):
            raise _EntryError(iline, "net entry without 'net type'")
        if _LOOPBACK.fullmatch(ntype.strip()):
            continue
        try:
            net = nodes.canonical_net(ntype)
        except nodes.NodeSyntaxError as exc:
            raise _EntryError(item.lines.get("net type", iline), str(exc)) from None
        ifaces = nets.setdefault(net, set())
        ifaces.update(_interfaces(item.get("interfaces"), item.lines.get("interfaces", iline)))
        for ni in _items(
            item.get("local NI(s)"), "local NI(s)", item.lines.get("local NI(s)", iline)
        ):
            ifaces.update(_interfaces(ni.get("interfaces"), ni.lines.get("interfaces", ni.line)))
            nid = ni.get("nid")
            if isinstance(nid, str):
                canon = _canonical_nid(nid, ni.lines.get("nid", ni.line), "NID")
                nids.setdefault(net, []).append(canon)
                status = ni.get("status")
                if isinstance(status, str) and status.lower() == "down":
                    health.append(f"NI {canon} is down")
    return NetTable(
        {n: tuple(sorted(i)) for n, i in nets.items()},
        {n: tuple(v) for n, v in nids.items()},
        tuple(health),
    )


def _route_order(key: RouteKey) -> tuple[object, ...]:
    net, gw = key
    addr, _, gnet = gw.rpartition("@")
    return (net, gnet, tuple(int(x) if x.isdigit() else 0 for x in addr.split(".")), gw)


def _route_health(
    routes: Mapping[RouteKey, tuple[int, int]],
    down: Mapping[str, list[str]],
    detailed: bool,
    extra: Iterable[str] = (),
) -> tuple[str, ...]:
    health: list[str] = list(extra)
    if detailed:
        undefined = sorted(
            (k for k, v in routes.items() if v[0] == UNDEFINED_HOP), key=_route_order
        )
        if undefined:
            net, gw = undefined[0]
            more = f" and {len(undefined) - 1} more" if len(undefined) > 1 else ""
            health.append(
                f"route to {net} via {gw}{more} has no hop count (-1); single-hop "
                "FGR routes need hop 1"
            )
    for gw in sorted(down, key=lambda g: _route_order(("", g))):
        health.append(f"gateway {gw} is down (routes to {', '.join(sorted(set(down[gw])))})")
    return tuple(health)


def _route_net(text: str, line: int) -> str:
    t = text.strip()
    if _LOOPBACK.fullmatch(t):
        raise _EntryError(line, f"route to the loopback net {t!r}")
    try:
        return nodes.canonical_net(t)
    except nodes.NodeSyntaxError as exc:
        raise _EntryError(line, f"bad route net: {exc}") from None


def _hop_priority(hop: int, prio: int, hop_line: int, prio_line: int) -> None:
    if hop != UNDEFINED_HOP and not 1 <= hop <= 255:
        raise _EntryError(hop_line, f"hop count {hop} is outside 1-255 (-1: not given)")
    if not 0 <= prio < 2**32:
        raise _EntryError(prio_line, f"priority {prio} is outside 0-{2**32 - 1}")


def _expand(token: str, line: int) -> list[str]:
    if "[" not in token:
        return [token]
    try:
        return routestr.expand_brackets(token.strip())
    except ValueError as exc:  # RouteSyntaxError is a ValueError
        raise _EntryError(line, f"bad range {token!r}: {exc}") from None


def _norm_routes(value: Any, line: int) -> RouteTable:
    routes: dict[RouteKey, tuple[int, int]] = {}
    down: dict[str, list[str]] = {}
    dups: list[str] = []
    entries = _items(value, "route", line)
    detailed = not entries or any("hop" in e or "priority" in e for e in entries)
    for e in entries:
        lines = e.lines
        net, gw = e.get("net"), e.get("gateway")
        if not isinstance(net, str) or not isinstance(gw, str):
            missing = "gateway" if isinstance(net, str) else "net"
            raise _EntryError(e.line, f"route entry without '{missing}'")
        hop_line, prio_line = lines.get("hop", e.line), lines.get("priority", e.line)
        hop = _int(e["hop"], hop_line, "hop") if e.get("hop") is not None else UNDEFINED_HOP
        prio = _int(e["priority"], prio_line, "priority") if e.get("priority") is not None else 0
        _hop_priority(hop, prio, hop_line, prio_line)
        targets = [_route_net(n, lines["net"]) for n in _expand(net, lines["net"])]
        gws = [
            _canonical_nid(g, lines["gateway"], "gateway") for g in _expand(gw, lines["gateway"])
        ]
        is_down = str(e.get("state", "")).lower() == "down"
        for n in targets:
            for g in gws:
                if (n, g) in routes:
                    dups.append(f"route to {n} via {g} listed twice")
                    continue
                routes[(n, g)] = (hop, prio)
                if is_down:
                    down.setdefault(g, []).append(n)
    return RouteTable(
        routes,
        detailed,
        _route_health(routes, down, detailed, dups),
        any("state" in e or "type" in e for e in entries),
    )


@dataclass(frozen=True)
class _Routing:
    enabled: bool | None
    sequence: bool
    health: tuple[str, ...] = ()


def _norm_routing(value: Any, line: int) -> _Routing:
    enable: Any = None
    eline = line
    sequence = isinstance(value, list)
    if isinstance(value, _Map):
        enable, eline = value.get("enable"), value.lines.get("enable", line)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, _Map) and "enable" in item:
                enable, eline = item["enable"], item.lines["enable"]
    elif value is not None:
        raise _EntryError(line, "'routing:' should be a mapping or a sequence")
    if enable is None:
        return _Routing(None, sequence, ("routing section without 'enable'",))
    text = str(enable).strip().lower()
    if text in ("true", "yes", "on"):
        return _Routing(True, sequence)
    if text in ("false", "no", "off"):
        return _Routing(False, sequence)
    return _Routing(_int(enable, eline, "routing enable") != 0, sequence)


def _norm_peers(value: Any, line: int) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for item in _items(value, "peer", line):
        found: list[str] = []
        primary = item.get("primary nid")
        if isinstance(primary, str):
            found.append(primary)
        for ni in _items(item.get("peer ni"), "peer ni", item.lines.get("peer ni", item.line)):
            nid = ni.get("nid")
            if isinstance(nid, str):
                found.append(nid)
        canon = set()
        for nid in found:
            try:
                canon.add(str(nodes.parse_nid(nid.strip())))
            except nodes.NodeSyntaxError:
                continue  # peers can list NIDs lnetgen does not model; they only help matching
        group = frozenset(canon)
        for nid in group:
            out[nid] = group
    return out


_NORMALIZERS = {
    "net": _norm_nets,
    "route": _norm_routes,
    "routing": _norm_routing,
    "peer": _norm_peers,
}
_LNET_SECTIONS = frozenset(
    (
        "net",
        "route",
        "routing",
        "peer",
        "buffers",
        "global",
        "numa",
        "discovery",
        "udsp",
        "ip2nets",
        "statistics",
        "ping",
        "max_intf",
        "drop_asym_route",
        "retry_count",
        "transaction_timeout",
        "health_sensitivity",
        "recovery_interval",
        "router_sensitivity",
        "lnd_timeout",
        "response_tracking",
        "recovery_limit",
        "max_recovery_ping_interval",
    )
)


# ----------------------------------------------------------------------------- YAML dumps


_SECTION_SPLIT = re.compile(rb"\n(?=[^ \t\r\n#\-])")
_DOC_MARKER = re.compile(rb"^(?:---|\.\.\.)[ \t]*\r?$", re.M)


@dataclass
class _Cache:
    """Parsed pieces keyed by their exact bytes (sections of YAML dumps, whole text dumps)."""

    sections: dict[bytes, list[tuple[str, Any, int]]] = field(default_factory=dict)
    pieces: dict[bytes, list[tuple[str, Any, int]]] = field(default_factory=dict)
    texts: dict[tuple[str, bytes], HostState] = field(default_factory=dict)
    size: int = 0

    def remember(self, nbytes: int) -> None:
        self.size += nbytes
        if self.size > _CACHE_BYTES:
            self.sections.clear()
            self.pieces.clear()
            self.texts.clear()
            self.size = nbytes


def _yaml_sections(data: bytes) -> Iterator[bytes]:
    """The text of each top-level section (a line at column 0 starts one), in order."""
    start = 0
    for m in _SECTION_SPLIT.finditer(data):
        yield data[start : m.end()]
        start = m.end()
    yield data[start:]


def _parse_section(chunk: bytes) -> list[tuple[str, Any, int]]:
    """[(key, normalized value, line of the key)] for one section; lines relative to it."""
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _EntryError(chunk[: exc.start].count(b"\n") + 1, "not valid UTF-8") from None
    value = _yaml_parse(text)
    if value is None:
        return []
    if not isinstance(value, _Map):
        raise _EntryError(
            getattr(value, "line", 1),
            "not an lnetctl YAML dump (expected sections such as 'net:' and 'route:')",
        )
    out = []
    for key, item in value.items():
        kline = value.lines[key]
        norm = _NORMALIZERS.get(key)
        out.append((key, norm(item, kline) if norm else item, kline))
    return out


def _parse_piece(piece: bytes, cache: _Cache) -> list[tuple[str, Any, int]]:
    """Sections of one piece of a YAML dump: [(key, normalized, line of the key in the
    piece)].  Raises ``_EntryError`` with lines relative to the piece."""
    if piece.startswith((b"---", b"...")) or b"\n---" in piece or b"\n..." in piece:
        piece = _DOC_MARKER.sub(b"", piece)  # keeps line numbers: only the marker text goes
    out: list[tuple[str, Any, int]] = []
    line0 = 0  # lines before the section: counted section by section, not from the start
    for chunk in _yaml_sections(piece):
        got = cache.sections.get(chunk)
        if got is None:
            try:
                got = _parse_section(chunk)
            except _EntryError as exc:
                if exc.line:
                    exc.line += line0
                raise
            cache.sections[chunk] = got
            cache.remember(len(chunk))
        out.extend((key, value, line0 + kline) for key, value, kline in got)
        line0 += chunk.count(b"\n")
    return out


def _parse_yaml(data: bytes, file: str, cache: _Cache) -> HostState:
    # Dumps of one client class share everything from ``route:`` on (routes, routing, peers,
    # global) and differ in the ``net:`` section before it (NIDs, statistics): the two pieces
    # are cached separately, so the big shared one is parsed once and only hashed afterwards.
    split = data.find(b"\nroute:")
    pieces = [(0, data)] if split < 0 else [(0, data[: split + 1]), (split + 1, data[split + 1 :])]
    parts: dict[str, tuple[Any, int]] = {}
    for offset, piece in pieces:
        got = cache.pieces.get(piece)
        if got is None:
            try:
                got = _parse_piece(piece, cache)
            except _EntryError as exc:
                line = exc.line + data.count(b"\n", 0, offset) if exc.line else 0
                raise LiveParseError(_diag(file, line, exc.col, exc.message)) from None
            cache.pieces[piece] = got
            cache.remember(len(piece))
        for key, value, kline in got:
            if key in parts:
                line = kline + data.count(b"\n", 0, offset)
                raise LiveParseError(_diag(file, line, 1, f"section {key!r} appears twice"))
            parts[key] = (value, kline)
    if not parts:
        raise LiveParseError(_diag(file, 0, 0, "the dump is empty", "E-LIVE-EMPTY"))
    keys = set(parts)
    if not keys & _NORMALIZERS.keys():
        unknown = sorted(keys - _LNET_SECTIONS)
        raise LiveParseError(
            _diag(
                file,
                1,
                1,
                "not an LNet dump: no 'net:', 'route:', "
                "'routing:' or 'peer:' section"
                + (f" (found {', '.join(unknown[:3])})" if unknown else ""),
            )
        )
    return _assemble_yaml(parts, file)


def _assemble_yaml(parts: dict[str, tuple[Any, int]], file: str) -> HostState:
    nets: NetTable | None = parts["net"][0] if "net" in parts else None
    routes: RouteTable | None = parts["route"][0] if "route" in parts else None
    routing: _Routing | None = parts["routing"][0] if "routing" in parts else None
    peers: Mapping[str, frozenset[str]] = parts["peer"][0] if "peer" in parts else _NO_PEERS
    health: list[str] = []
    keys = set(parts) - {"buffers"}
    if "ip2nets" in parts:
        health.append("ip2nets is not resolved (it depends on the node's addresses)")
    if keys == {"route"}:
        assert routes is not None
        fmt = ROUTE_SHOW_V if routes.detailed else ROUTE_SHOW
        if not routes.detailed:
            health.append(
                "dump has no hop/priority (use `lnetctl route show -v`): only route "
                "presence compared"
            )
        return HostState(None, routes, None, peers, tuple(health), (file,), (fmt,))
    if keys == {"net"}:
        return HostState(nets, None, None, peers, tuple(health), (file,), (NET_SHOW,))
    if keys == {"routing"}:
        assert routing is not None
        return HostState(
            None, None, routing.enabled, peers, routing.health, (file,), (ROUTING_SHOW,)
        )
    # a whole configuration: what it leaves out is not configured
    if (routing is not None and routing.sequence) or (routes is not None and routes.shows_state):
        fmt = EXPORT
    elif "global" in parts:
        fmt = BACKUP
    else:
        fmt = CONFIG
    if routing is not None:
        health.extend(routing.health)
    return HostState(
        nets if nets is not None else NetTable({}),
        routes if routes is not None else RouteTable({}),
        routing.enabled if routing is not None else False,
        peers,
        tuple(health),
        (file,),
        (fmt,),
    )


# ----------------------------------------------------------------------------- lctl tables


_ROUTING_LINE = re.compile(r"Routing\s+(enabled|disabled|starting|stopping|unknown)\s*$")
_SHOW_ROUTE = re.compile(r"net\s+\S+\s+hops\s+-?\d+\s+gw\s")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    for n, raw in enumerate(text.split("\n"), 1):
        s = raw.strip()
        if s:
            yield n, s


def _route_entry(net: str, hop: str, prio: str, gw: str, line: int) -> tuple[str, str, int, int]:
    h = _int(hop, line, "hops")
    p = _int(prio, line, "priority")
    _hop_priority(h, p, line, line)
    return (_route_net(net, line), _canonical_nid(gw, line, "gateway"), h, p)


def _parse_lctl_routes(text: str) -> HostState:
    """``lctl get_param -n routes``: ``Routing X``, a header, then rows."""
    routing: bool | None = None
    health: list[str] = []
    routes: dict[RouteKey, tuple[int, int]] = {}
    down: dict[str, list[str]] = {}
    dups: list[str] = []
    columns: list[str] | None = None
    seen_routing = False
    for n, s in _lines(text):
        if not seen_routing:
            if s.startswith("routes="):
                s = s[len("routes=") :].strip()
                if not s:
                    continue
            m = _ROUTING_LINE.match(s)
            if not m:
                raise _EntryError(
                    n, f"expected 'Routing enabled' or 'Routing disabled', got {s[:40]!r}"
                )
            word = m.group(1)
            routing = {"enabled": True, "disabled": False, "starting": True, "stopping": False}.get(
                word
            )
            if word in ("starting", "stopping", "unknown"):
                health.append(
                    f"routing is {word}"
                    + (" (drained with `lnetctl set routing 0`)" if word == "stopping" else "")
                )
            seen_routing = True
            continue
        fields = s.split()
        if columns is None:
            if fields[0] != "net":
                raise _EntryError(
                    n, f"expected the header 'net hops priority state router', got {s[:40]!r}"
                )
            columns = fields
            if columns not in (
                ["net", "hops", "priority", "state", "router"],
                ["net", "hops", "state", "router"],
            ):
                raise _EntryError(n, f"unknown header {s!r}")
            continue
        if len(fields) != len(columns):
            raise _EntryError(
                n,
                f"expected {len(columns)} columns ({' '.join(columns)}), got "
                f"{len(fields)}: {s[:60]!r}",
            )
        row = dict(zip(columns, fields, strict=True))
        net, gw, hop, prio = _route_entry(
            row["net"], row["hops"], row.get("priority", "0"), row["router"], n
        )
        if (net, gw) in routes:
            dups.append(f"route to {net} via {gw} listed twice")
        else:
            routes[(net, gw)] = (hop, prio)
        if row["state"].lower() == "down":
            down.setdefault(gw, []).append(net)
    if not seen_routing:
        raise _EntryError(0, "the dump is empty")
    table = RouteTable(routes, True, _route_health(routes, down, True, dups))
    return HostState(None, table, routing, _NO_PEERS, tuple(health), (), (LCTL_ROUTES,))


def _parse_show_route(text: str) -> HostState:
    """``lctl show_route``: ``net N hops H gw G up|down pri P`` per line."""
    routes: dict[RouteKey, tuple[int, int]] = {}
    down: dict[str, list[str]] = {}
    dups: list[str] = []
    for n, s in _lines(text):
        f = s.split()
        if len(f) != 9 or (f[0], f[2], f[4], f[7]) != ("net", "hops", "gw", "pri"):
            raise _EntryError(n, f"expected 'net N hops H gw G up|down pri P', got {s[:60]!r}")
        net, gw, hop, prio = _route_entry(f[1], f[3], f[8], f[5], n)
        if (net, gw) in routes:
            dups.append(f"route to {net} via {gw} listed twice")
        else:
            routes[(net, gw)] = (hop, prio)
        if f[6].lower() == "down":
            down.setdefault(gw, []).append(net)
    table = RouteTable(routes, True, _route_health(routes, down, True, dups))
    return HostState(None, table, None, _NO_PEERS, (), (), (LCTL_SHOW_ROUTE,))


# ----------------------------------------------------------------------------- modprobe


_MODPROBE_WORDS = frozenset(
    ("options", "install", "remove", "alias", "blacklist", "softdep", "include")
)


@dataclass
class _Logical:
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


def _logical_lines(text: str) -> Iterator[_Logical]:
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
            yield _Logical("".join(parts), starts, lines)
            parts, starts, lines, size = [], [], [], 0
    if parts:
        yield _Logical("".join(parts), starts, lines)


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


def _parse_modprobe(text: str) -> HostState:
    params: dict[str, tuple[str, _Logical, int]] = {}
    seen = False
    for logical in _logical_lines(text):
        words = _words(logical.text)
        if not words:
            continue
        if words[0][1] not in _MODPROBE_WORDS:
            line, col = logical.at(words[0][0])
            raise _EntryError(line, f"not a modprobe command: {words[0][1]!r}", col)
        if words[0][1] != "options" or len(words) < 2:
            continue
        if words[1][1].replace("-", "_") != "lnet":
            continue
        seen = True
        for off, word in words[2:]:
            name, value, voff = _param(word)
            params[name] = (value, logical, off + voff)  # the kernel keeps the last value
    if not seen:
        raise _EntryError(0, "no 'options lnet' line")

    def fail(name: str, exc: routestr.RouteSyntaxError) -> _EntryError:
        _value, logical, off = params[name]
        line, col = logical.at(off + exc.offset)
        return _EntryError(line, f"{name}=: {exc.message}", col)

    health: list[str] = []
    nets: NetTable | None = None
    if "networks" in params:
        try:
            parsed = routestr.parse_networks(params["networks"][0])
        except routestr.RouteSyntaxError as exc:
            raise fail("networks", exc) from None
        nets = NetTable({n: tuple(sorted(i)) for n, i in parsed})
    elif "ip2nets" in params:
        health.append(
            "ip2nets is not resolved (it depends on the node's addresses): networks not compared"
        )
    else:
        health.append("no networks= (LNet would default to tcp): networks not compared")
    routes = RouteTable({})
    if params.get("routes", ("",))[0].strip():
        try:
            ordered = routestr.parse_routes_ordered(params["routes"][0])
        except routestr.RouteSyntaxError as exc:
            raise fail("routes", exc) from None
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
        routes = RouteTable(table, True, _route_health(table, {}, True, notes))
    routing: bool | None = None
    if "forwarding" in params:
        value, logical, off = params["forwarding"]
        if value == "enabled":
            routing = True
        elif value == "disabled":
            routing = False
        elif value:
            line, col = logical.at(off)
            raise _EntryError(
                line, f"forwarding={value!r} is neither 'enabled' nor 'disabled'", col
            )
    return HostState(nets, routes, routing, _NO_PEERS, tuple(health), (), (MODPROBE,))


# ----------------------------------------------------------------------------- detection


def _first_line(data: bytes) -> bytes:
    """The first line that is neither blank nor a ``#`` comment (stripped)."""
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            end = len(data)
        s = data[pos:end].strip()
        if s and not s.startswith(b"#"):
            return s
        pos = end + 1
    return b""


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
    if _SHOW_ROUTE.match(first.decode("utf-8", "replace")):
        return "lctl-show-route"
    if first.split(None, 1)[0].decode("utf-8", "replace") in _MODPROBE_WORDS:
        return "modprobe"
    return "yaml"


_TEXT_PARSERS = {
    "lctl-routes": _parse_lctl_routes,
    "lctl-show-route": _parse_show_route,
    "modprobe": _parse_modprobe,
}


def parse_dump(
    data: bytes | str, file: str, *, host: str = "", cache: _Cache | None = None
) -> HostState:
    """Parse one dump of any accepted format into a ``HostState``.

    Raises ``LiveParseError`` naming ``file`` and the line (and ``host`` when given).
    """
    if isinstance(data, str):
        data = data.encode()
    cache = cache if cache is not None else _Cache()
    try:
        if b"\x00" in data:
            line = data[: data.index(b"\x00")].count(b"\n") + 1
            raise LiveParseError(
                _diag(
                    file, line, 0, "binary data (NUL byte); expected a text dump", "E-LIVE-BINARY"
                )
            )
        kind = detect_format(data)
        if not kind:
            raise LiveParseError(_diag(file, 0, 0, "the dump is empty", "E-LIVE-EMPTY"))
        if kind == "yaml":
            state = _parse_yaml(data, file, cache)
        else:
            cached = cache.texts.get((kind, data))
            if cached is None:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise _EntryError(
                        data[: exc.start].count(b"\n") + 1, "not valid UTF-8"
                    ) from None
                cached = _TEXT_PARSERS[kind](text)
                cache.texts[(kind, data)] = cached
                cache.remember(len(data))
            state = HostState(
                cached.nets,
                cached.routes,
                cached.routing,
                cached.peers,
                cached.health,
                (file,),
                cached.formats,
            )
    except _EntryError as exc:
        raise LiveParseError(_diag(file, exc.line, exc.col, exc.message, host=host)) from None
    except MemoryError:
        # a dump near the size limit parses into ~25 times its size; what was built is freed
        # on the way out, so the other dumps are still read
        raise LiveParseError(
            _diag(
                file,
                0,
                0,
                f"the dump ({len(data)} bytes) is too big to parse in the memory available",
                "E-LIVE-SIZE",
                host,
            )
        ) from None
    except LiveParseError as exc:
        if host and not exc.diagnostic.message.startswith("host "):
            d = exc.diagnostic
            raise LiveParseError(
                Diagnostic(
                    d.file, d.line, d.col, d.severity, d.code, d.path, f"host {host}: {d.message}"
                )
            ) from None
        raise
    return state


# ----------------------------------------------------------------------------- merging


def _same_nets(a: NetTable, b: NetTable) -> bool:
    return dict(a.nets) == dict(b.nets)


def merge_states(states: list[HostState]) -> HostState:
    """One state from several dumps of a host: each part comes from the first dump that shows
    it; a later dump that disagrees adds a health note."""
    if len(states) == 1:
        return states[0]
    nets: NetTable | None = None
    routes: RouteTable | None = None
    routing: bool | None = None
    peers: dict[str, frozenset[str]] = {}
    health: list[str] = []
    src: dict[str, str] = {}
    for s in states:
        name = s.sources[0] if s.sources else "?"
        if s.nets is not None:
            if nets is None:
                nets, src["nets"] = s.nets, name
            elif s.nets.nets and not _same_nets(nets, s.nets):
                health.append(f"{name} and {src['nets']} disagree on networks; using {src['nets']}")
            if s.nets.nids and not nets.nids:
                nets = NetTable(nets.nets, s.nets.nids, nets.health + s.nets.health)
        if s.routes is not None:
            if routes is None or (not routes.detailed and s.routes.detailed):
                routes, src["routes"] = s.routes, name
            elif dict(routes.routes) != dict(s.routes.routes) and s.routes.detailed:
                health.append(
                    f"{name} and {src['routes']} disagree on routes; using {src['routes']}"
                )
        if s.routing is not None:
            if routing is None:
                routing, src["routing"] = s.routing, name
            elif routing != s.routing:
                health.append(
                    f"{name} and {src['routing']} disagree on routing; using {src['routing']}"
                )
        peers.update(s.peers)
        health.extend(s.health)
    return HostState(
        nets,
        routes,
        routing,
        peers or _NO_PEERS,
        tuple(dict.fromkeys(health)),
        tuple(x for s in states for x in s.sources),
        tuple(dict.fromkeys(f for s in states for f in s.formats)),
    )


# ----------------------------------------------------------------------------- reading PATH


def _shown(text: str) -> str:
    """``text`` fit to print: control characters, undecodable bytes and other unprintable
    characters escaped (a file name or a manifest may hold any of them)."""
    return text if text.isprintable() else ascii(text)[1:-1]


def _clip(text: str, limit: int = 100) -> str:
    shown = _shown(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


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
            f"'{_clip(host)}' is not a host name (letters, digits and '-', at most 63; the "
            "host name ends at the first '.')"
        )
    elif not base.isprintable():
        why = "the file name holds characters that cannot be printed"
    else:
        return host
    raise LiveParseError(_diag(_shown(file_name), 0, 0, f"not read: {why}", "E-LIVE-NAME"))


def _file_kind(mode: int) -> str:
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
        _diag(path, 0, 0, f"is {_file_kind(mode)}, not a regular file", "E-LIVE-READ")
    )


def _too_big(path: str, what: str) -> LiveParseError:
    return LiveParseError(
        _diag(path, 0, 0, f"{what}, over the {MAX_FILE_BYTES}-byte limit", "E-LIVE-SIZE")
    )


def _read(path: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``MAX_FILE_BYTES`` of them.

    Anything else is refused before it is read: a named pipe would wait for a writer forever
    and a device such as ``/dev/zero`` never ends (its size reads 0).  Raises
    ``LiveParseError`` (``E-LIVE-READ``, ``E-LIVE-SIZE``) or ``OSError``.
    """
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
        data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise _too_big(path, "file grew while it was read")
    return data


def _input_error(path: str, message: str) -> InputError:
    return InputError([Diagnostic(path, 0, 0, "error", "E-LIVE-PATH", "$", message)])


def read_live(path: str) -> LiveSet:
    """Read a live PATH: a directory of per-host dumps, one dump, or a ``lnetgen generate``
    directory.  Unparsable dumps, and files whose name is not a host name, become
    ``LiveSet.errors``; raises ``InputError`` when PATH itself cannot be read, is neither a
    regular file nor a directory, or holds no dump."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise _input_error(path, "no such file or directory") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise _input_error(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    cache = _Cache()
    live = LiveSet(path)
    if stat.S_ISDIR(st.st_mode):
        if os.path.isfile(os.path.join(path, "manifest.json")):
            _read_generated(path, live, cache)
            return live
        try:
            with os.scandir(path) as entries:
                # anything but a directory is a dump: pipes and devices are refused by _read
                names = sorted(
                    e.name for e in entries if not e.name.startswith(".") and not e.is_dir()
                )
        except OSError as exc:
            raise _input_error(path, f"cannot list: {exc.strerror or exc}") from None
        if not names:
            raise _input_error(path, "the directory holds no dump files")
        by_host: dict[str, list[str]] = {}
        for name in names:
            full = os.path.join(path, name)
            try:
                by_host.setdefault(host_of(full), []).append(full)
            except LiveParseError as exc:
                live.errors.append(exc.diagnostic)
        for host in sorted(by_host):
            _read_host(host, by_host[host], live, cache)
        return live
    if not stat.S_ISREG(st.st_mode):
        raise _input_error(
            path, f"is {_file_kind(st.st_mode)}, expected a dump file or a directory of dumps"
        )
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as exc:
        raise _input_error(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        host = host_of(path)
    except LiveParseError as exc:
        live.errors.append(exc.diagnostic)
        return live
    _read_host(host, [path], live, cache)
    return live


def _read_host(host: str, files: list[str], live: LiveSet, cache: _Cache) -> None:
    states = []
    for f in files:
        try:
            states.append(parse_dump(_read(f), f, host=host, cache=cache))
        except LiveParseError as exc:
            live.errors.append(exc.diagnostic)
            live.error_hosts.add(host)
        except OSError as exc:
            live.errors.append(
                _diag(f, 0, 0, f"cannot read: {exc.strerror or exc}", "E-LIVE-READ", host)
            )
            live.error_hosts.add(host)
    live.files[host] = tuple(files)
    if states:
        live.hosts[host] = merge_states(states)


#: Formats a generated tree's dumps are read from, the primary one first.
_GENERATED_FORMATS = ("lnetctl", "modprobe")


def _manifest_entries(mpath: str, live: LiveSet) -> list[tuple[str, str, str]]:
    """(format, path, hosts) of the manifest's lnetctl and modprobe files, checked for shape;
    sets ``live.generated``.  Raises ``InputError`` (``E-LIVE-PATH``)."""

    def bad(message: str) -> InputError:
        return _input_error(mpath, message)

    try:
        manifest = json.loads(_read(mpath))
    except LiveParseError as exc:
        raise bad(f"not an lnetgen manifest: {exc.diagnostic.message}") from None
    except OSError as exc:
        raise bad(f"cannot read: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # bad JSON or UTF-8; JSON nested too deeply
        raise bad(f"not an lnetgen manifest: {_clip(str(exc), 200)}") from None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, list) or not all(isinstance(e, dict) for e in files):
        raise bad('not an lnetgen manifest: expected an object whose "files" is a list of objects')
    live.generated = {
        k: _clip(str(v), 200) if isinstance(v, str | int | float) else ""
        for k in ("site", "strategy", "inventory_digest", "lnetgen_version")
        for v in (manifest.get(k, ""),)
    }
    out = []
    for i, entry in enumerate(files):
        fmt, rel, hosts = entry.get("format"), entry.get("path"), entry.get("hosts")
        if fmt not in _GENERATED_FORMATS or not hosts:
            continue
        if not isinstance(rel, str) or not isinstance(hosts, str):
            raise bad(f'not an lnetgen manifest: files[{i}] needs a text "path" and "hosts"')
        if not rel or not rel.isprintable():
            raise bad(
                f"file path '{_clip(rel)}' is empty or holds characters that cannot be printed"
            )
        if os.path.isabs(rel) or ".." in rel.split("/"):
            raise bad(f"file path {rel!r} leaves the directory")
        out.append((str(fmt), rel, hosts))
    out.sort(key=lambda e: (_GENERATED_FORMATS.index(e[0]), e[1]))
    return out


def _read_generated(path: str, live: LiveSet, cache: _Cache) -> None:
    mpath = os.path.join(path, "manifest.json")
    chosen: dict[str, str] = {}
    total = 0
    for _fmt, rel, hosts in _manifest_entries(mpath, live):
        size = nodes.count(hosts)  # a node set is sized before ClusterShell expands it
        total += size
        if total > MAX_MANIFEST_HOSTS:
            raise _input_error(
                mpath,
                f"hosts '{_clip(hosts)}' of {rel!r} name {size} hosts: the manifest's entries "
                f"may name at most {MAX_MANIFEST_HOSTS} in all",
            )
        try:
            names = nodes.expand(hosts)
        except nodes.NodeSyntaxError as exc:
            raise _input_error(
                mpath, f"bad hosts '{_clip(hosts)}': {_clip(str(exc), 200)}"
            ) from None
        for h in names:
            if nodes.HOSTNAME_RE.match(h) is None:
                raise _input_error(
                    mpath, f"bad hosts '{_clip(hosts)}': '{_clip(h)}' is not a host name"
                )
            chosen.setdefault(h, rel)  # lnetctl first: it is the primary format
    if not chosen:
        raise _input_error(path, "the manifest lists no lnetctl or modprobe files")
    by_file: dict[str, list[str]] = {}
    for h, rel in chosen.items():
        by_file.setdefault(rel, []).append(h)
    for rel in sorted(by_file):
        full = os.path.join(path, rel)
        members = by_file[rel]
        try:
            state: HostState | None = parse_dump(_read(full), full, cache=cache)
        except LiveParseError as exc:
            live.errors.append(exc.diagnostic)
            live.error_hosts.update(members)
            state = None
        except OSError as exc:
            live.errors.append(
                _diag(full, 0, 0, f"cannot read: {exc.strerror or exc}", "E-LIVE-READ")
            )
            live.error_hosts.update(members)
            state = None
        for h in members:
            live.files[h] = (full,)
            if state is not None:
                live.hosts[h] = state
