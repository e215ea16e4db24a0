"""Reading lnetctl YAML dumps: ``lnetctl export [--backup]``, ``lnetctl net|route|routing
show`` and lnet.conf files such as ``lnetgen generate`` writes.

A dump is cut into top-level sections, each parsed and normalized on its own and cached by its
exact text; which sections a dump holds tells its format.  What a whole configuration leaves out
is not configured; what a ``show`` of one section leaves out is unknown.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any

from lnetgen.diagnostics import json_path
from lnetgen.live.block_yaml import Map, yaml_parse
from lnetgen.live.cache import ParseCache, Sections
from lnetgen.live.errors import EntryError, LiveParseError, clip, decode, diag
from lnetgen.live.fast_routes import route_table
from lnetgen.live.lnetctl_sections import LNET_SECTIONS, NORMALIZERS, Globals, Routing
from lnetgen.live.state import (
    BACKUP,
    CONFIG,
    EXPORT,
    NET_SHOW,
    NO_PEERS,
    ROUTE_SHOW,
    ROUTE_SHOW_V,
    ROUTING_SHOW,
    UDSP_SHOW,
    HostState,
    NetTable,
    RouteTable,
)
from lnetgen.tunables import BY_NAME, YAML_SHOWN
from lnetgen.udsp import Rule

_SECTION_SPLIT = re.compile(rb"\n(?=[^ \t\r\n#\-])")
_DOC_MARKER = re.compile(rb"^(?:---|\.\.\.)[ \t]*\r?$", re.M)
#: Pieces up to this size are cached whole (client classes share them); larger ones by section.
_PIECE_CACHE_MAX = 256 << 10


def _yaml_sections(data: bytes, begin: int = 0, end: int | None = None) -> Iterator[bytes]:
    """The text of each top-level section of ``data[begin:end]`` (a line at column 0 starts
    one), in order; only the sections are copied, never the whole range."""
    stop = len(data) if end is None else end
    start = begin
    for m in _SECTION_SPLIT.finditer(data, begin, stop):
        yield data[start : m.end()]
        start = m.end()
    yield data[start:stop]


def _parse_section(chunk: bytes) -> Sections:
    """[(key, normalized value, line of the key)] for one section; lines relative to it."""
    fast = route_table(chunk) if chunk.startswith(b"route:\n") else None
    if fast is not None:
        return [("route", fast, 1)]
    value = yaml_parse(decode(chunk))
    if value is None:
        return []
    if not isinstance(value, Map):
        raise EntryError(
            getattr(value, "line", 1),
            "not an lnetctl YAML dump (expected sections such as 'net:' and 'route:')",
        )
    out = []
    for key, item in value.items():
        kline = value.lines[key]
        norm = NORMALIZERS.get(key)
        try:
            out.append((key, norm(item, kline) if norm else item, kline))
        except EntryError as exc:
            raise exc.under(json_path([key])) from None
    return out


def _parse_piece(data: bytes, begin: int, end: int, cache: ParseCache) -> Sections:
    """Sections of the piece ``data[begin:end]`` of a YAML dump: [(key, normalized, line of
    the key in the piece)].  Raises ``EntryError`` with lines relative to the piece."""
    if (
        data.startswith((b"---", b"..."), begin, end)
        or data.find(b"\n---", begin, end) >= 0
        or data.find(b"\n...", begin, end) >= 0
    ):
        # keeps line numbers: only the marker text goes
        data, begin, end = _DOC_MARKER.sub(b"", data[begin:end]), 0, None  # type: ignore[assignment]
    try:
        return _parse_sections(data, begin, end, cache)
    except EntryError as exc:
        if "undefined alias" not in exc.text:
            raise
    # an alias to an anchor of another section (lnetctl writes neither): the piece is parsed
    # as the one YAML document it is, so that what the alias stands for is known -- and an
    # alias bomb is refused for its size (``from_node``), not called an undefined alias
    return _parse_section(data[begin:end])


def _parse_sections(data: bytes, begin: int, end: int | None, cache: ParseCache) -> Sections:
    """``_parse_piece``, section by section (each parsed once for all the dumps sharing it)."""
    out: Sections = []
    line0 = 0  # lines before the section: counted section by section, not from the start
    for chunk in _yaml_sections(data, begin, end):
        got = cache.sections.get(chunk)
        if got is None:
            try:
                got = _parse_section(chunk)
            except EntryError as exc:
                exc.shift(line0)
                raise
            cache.sections[chunk] = got
            cache.remember(len(chunk))
        out.extend((key, value, line0 + kline) for key, value, kline in got)
        line0 += chunk.count(b"\n")
    return out


def parse_yaml(data: bytes, file: str, cache: ParseCache) -> HostState:
    """The state an lnetctl YAML dump shows.  Raises ``LiveParseError`` naming ``file``."""
    # Dumps of one client class share everything from ``route:`` on (routes, routing, peers,
    # global) and differ in the ``net:`` section before it (NIDs, statistics): the two pieces
    # are cached separately, so the big shared one is parsed once and only hashed afterwards.
    # A large piece (one host's long route table) is neither copied nor cached whole: only its
    # sections are, so reading it holds about twice its size.
    split = data.find(b"\nroute:")
    bounds = [(0, len(data))] if split < 0 else [(0, split + 1), (split + 1, len(data))]
    parts: dict[str, tuple[Any, int]] = {}
    errors: list[tuple[str, str]] = []
    for offset, stop in bounds:
        piece = data[offset:stop] if stop - offset <= _PIECE_CACHE_MAX else None
        got = cache.pieces.get(piece) if piece is not None else None
        if got is None:
            try:
                got = _parse_piece(data, offset, stop, cache)
            except EntryError as exc:
                exc.shift(data.count(b"\n", 0, offset))
                line = exc.line
                raise LiveParseError(
                    diag(file, line, exc.col, exc.message, path=exc.path)
                ) from None
            if piece is not None:
                cache.pieces[piece] = got
                cache.remember(len(piece))
        for key, value, kline in got:
            if key == "show":  # an error block: one per section lnetctl failed to show
                errors.extend(show_errors(value))
                continue
            if key in parts:
                line = kline + data.count(b"\n", 0, offset)
                raise LiveParseError(
                    diag(file, line, 1, f"section {key!r} appears twice", path=json_path([key]))
                )
            if key == "udsp" and value:  # the rules' lines, from their section's to the file's
                at = kline + data.count(b"\n", 0, offset) - 1
                value = tuple(dataclasses.replace(r, line=r.line + at) for r in value)
            parts[key] = (value, kline)
    if not parts and errors:
        failed = "; ".join(f"{entity}: {why}" for entity, why in errors)
        raise LiveParseError(diag(file, 1, 1, f"lnetctl showed nothing but errors: {failed}"))
    if not parts:
        raise LiveParseError(diag(file, 0, 0, "the dump is empty", "E-LIVE-EMPTY"))
    keys = set(parts)
    if not keys & NORMALIZERS.keys():
        unknown = sorted(keys - LNET_SECTIONS)
        raise LiveParseError(
            diag(
                file,
                1,
                1,
                "not an LNet dump: no 'net:', 'route:', "
                "'routing:' or 'peer:' section"
                # the keys are not quoted back: a file that is no dump may be anything
                + (f" ({len(unknown)} other top-level key(s))" if unknown else ""),
            )
        )
    state = _assemble_yaml(parts, file)
    return _with_errors(state, errors, set(parts)) if errors else state


#: What a section lnetctl failed to show leaves unknown: the parts of a ``HostState`` and the
#: YAML sections of the tunables (``lnetgen.tunables``: ``Tunable.yaml[0]``).
_FAILED_PARTS = {
    "net": ("nets", ("tunables", "lnd tunables")),
    "route": ("routes", ()),
    "routing": ("routing", ("buffers",)),
    "global": ("", ("global",)),
    "udsp": ("udsp", ()),
}


def show_errors(value: Any) -> list[tuple[str, str]]:
    """(section, why) of each entry of an error block lnetctl writes into its output when it
    cannot show a section (``show: [{net: {errno: -100, descr: "cannot get networks: ..."}}]``;
    ``lnetctl export`` prints one block per failing section, so a dump may hold several),
    made printable and cut short."""
    out = []
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, dict) or not item:
            out.append(("?", "an error lnetgen cannot read"))
            continue
        for entity, body in item.items():
            body = body if isinstance(body, dict) else {}
            why = str(body.get("descr", "no description"))
            if "errno" in body:
                why += f" (errno {body['errno']})"
            out.append((clip(str(entity), 40), clip(why, 200)))
    return out


def _with_errors(state: HostState, errors: list[tuple[str, str]], shown: set[str]) -> HostState:
    """``state`` of a dump holding lnetctl error blocks (``shown``: the sections it does hold):
    a note per failed section, and what that section would have shown unknown (not compared)
    rather than empty (not configured).

    Decision: the rest of the dump is what the node runs and is compared; a section lnetctl
    could not show says nothing about the node, so it is neither "no routes" nor "no networks"
    (which would propose adding them all).  Such a dump is lnetctl output, not a configuration
    file, whatever sections it lacks."""
    failed = {entity for entity, _why in errors}
    health = [f"lnetctl could not show {entity}: {why}" for entity, why in errors]
    changes: dict[str, Any] = {"health": (*state.health, *dict.fromkeys(health))}
    hidden: set[str] = set()
    for entity in sorted(failed & _FAILED_PARTS.keys()):
        part, sections = _FAILED_PARTS[entity]
        hidden.update(sections)
        if part and entity not in shown:
            changes[part] = None
    if hidden and state.tunables is not None:
        have = {name.rpartition(".")[2] for name in state.tunables}
        changes["tunables_shown"] = frozenset(
            n for n in state.tunables_shown if n in have or BY_NAME[n].yaml[0] not in hidden
        )
    if state.formats == (CONFIG,):
        changes["formats"] = (BACKUP,)
        changes["tunables_explicit"] = False
    return dataclasses.replace(state, **changes)


def _assemble_yaml(parts: dict[str, tuple[Any, int]], file: str) -> HostState:
    """One state from a dump's normalized sections; which sections it holds name its format."""
    nets: NetTable | None = parts["net"][0] if "net" in parts else None
    routes: RouteTable | None = parts["route"][0] if "route" in parts else None
    routing: Routing | None = parts["routing"][0] if "routing" in parts else None
    peers: Mapping[str, frozenset[str]] = parts["peer"][0] if "peer" in parts else NO_PEERS
    health: list[str] = []
    tunables: dict[str, int] = dict(parts["buffers"][0]) if "buffers" in parts else {}
    glob: Globals | None = parts["global"][0] if "global" in parts else None
    rules: tuple[Rule, ...] | None = parts["udsp"][0] if "udsp" in parts else None
    if glob is not None:
        tunables.update(glob.values)
    keys = set(parts) - {"buffers"}
    if keys == {"udsp"}:  # `lnetctl udsp show`
        return HostState(None, None, None, peers, (), (file,), (UDSP_SHOW,), udsp=rules)
    if keys <= {"global"}:  # `lnetctl global show` (and buffers alone)
        return HostState(
            None,
            None,
            None,
            peers,
            (),
            (file,),
            (CONFIG,),
            tunables,
            frozenset(n for n in YAML_SHOWN if BY_NAME[n].yaml[0] in parts),
        )
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
    elif glob is not None and glob.full:
        fmt = BACKUP
    else:
        fmt = CONFIG
    if routing is not None:
        health.extend(routing.health)
    if nets is not None:
        tunables.update(nets.tunables)
    return HostState(
        nets if nets is not None else NetTable({}),
        routes if routes is not None else RouteTable({}),
        routing.enabled if routing is not None else False,
        peers,
        tuple(health),
        (file,),
        (fmt,),
        tunables,
        YAML_SHOWN,
        fmt == CONFIG,
        rules if rules is not None else (),
    )
