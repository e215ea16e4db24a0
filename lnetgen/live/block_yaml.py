"""Reading the YAML lnetctl prints: a fast block-style parser with PyYAML as the fallback.

lnetctl (libyaml) prints block-style YAML; a small recursive-descent parser reads that subset,
keeping the line of every mapping, sequence and key for diagnostics.  Any text outside the
subset goes to PyYAML, which also words the syntax errors.  Both give ``Map``/``Seq`` trees of
strings and ``None``; problems are ``EntryError`` with lines relative to the text.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from lnetgen import yamlsrc
from lnetgen.diagnostics import InputError, json_path
from lnetgen.live.errors import EntryError

try:  # the C composer is several times faster
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

#: Deepest nesting of YAML lists and mappings accepted (lnetctl prints about 6 levels).
MAX_DEPTH = yamlsrc.MAX_DEPTH
#: Most values one document of a dump may stand for, aliases expanded.
MAX_VALUES = 1_000_000


class Map(dict[str, Any]):
    """A mapping with the line of its first key and of every key."""

    __slots__ = ("line", "lines")

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.lines: dict[str, int] = {}


class Seq(list[Any]):
    """A sequence with the line it starts on."""

    __slots__ = ("line",)

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line


class Unsupported(Exception):
    """The text is outside the block subset; PyYAML decides."""


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
        raise Unsupported
    if c == "'":
        inner = text[1:-1]
        if len(text) >= 2 and text[-1] == "'" and "'" not in inner:
            return inner
        raise Unsupported
    if (
        c in _SPECIAL_START
        or " #" in text
        or ": " in text
        or text[-1] == ":"
        or text == "-"
        or text.startswith("- ")
    ):
        raise Unsupported
    return text


def _split_key(s: str) -> tuple[str, str]:
    p = s.find(": ")
    if p < 0:
        if s[-1] != ":":
            raise Unsupported
        key, value = s[:-1], ""
    else:
        key, value = s[:p], s[p + 2 :].lstrip(" ")
    if not key or key[0] in _SPECIAL_START or key[0] in "'\"" or key[-1] == " " or "#" in key:
        raise Unsupported
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
            raise Unsupported  # PyYAML's event count reports it, with the line
        value = self.seq(ind) if self.t[self.i][3] else self.map(ind)
        self.depth -= 1
        return value

    def seq(self, ind: int) -> Seq:
        t = self.t
        n = len(t)
        out = Seq(t[self.i][1])
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

    def map(self, ind: int) -> Map:
        t = self.t
        n = len(t)
        out = Map(t[self.i][1])
        lines = out.lines
        while self.i < n:
            tok = t[self.i]
            if tok[0] != ind or tok[3]:
                break
            key, value = _split_key(tok[2])
            if key in out:
                raise Unsupported  # PyYAML words it (and from_node rejects it)
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


def block_parse(text: str) -> Any:
    """Parse block-style YAML; raises ``Unsupported`` outside the subset."""
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
            raise Unsupported
        toks.append([len(raw) - len(body), n, s, c == "-" and (len(s) == 1 or s[1] == " ")])
    if not toks:
        return None
    p = _Block(toks)
    value = p.node(toks[0][0])
    if p.i != len(toks):
        raise Unsupported
    return value


def from_node(
    node: yaml.Node, budget: list[int], depth: int = 0, at: tuple[str | int, ...] = ()
) -> Any:
    """A PyYAML node as a ``Map``/``Seq`` tree; ``budget[0]`` is how many more values may be
    built (aliases can make a short text stand for a huge tree); ``at`` is where the node is
    in the document, for the errors."""
    budget[0] -= 1
    if budget[0] < 0:
        raise EntryError(
            node.start_mark.line + 1,
            f"document expands to too many values, more than {MAX_VALUES:,} (aliases repeat "
            "what their anchors stand for: an alias bomb?)",
            node.start_mark.column + 1,
            json_path(at),
        )
    line = node.start_mark.line + 1
    if depth > MAX_DEPTH:  # the text was checked; aliases can nest deeper (or contain themselves)
        raise EntryError(
            line,
            f"document is nested too deeply (more than {MAX_DEPTH} levels, counting what "
            "aliases stand for)",
            node.start_mark.column + 1,
            json_path(at[:MAX_DEPTH]) + ("..." if len(at) > MAX_DEPTH else ""),
        )
    if isinstance(node, yaml.ScalarNode):
        if node.tag == "tag:yaml.org,2002:null":
            return None
        return str(node.value)
    if isinstance(node, yaml.SequenceNode):
        seq = Seq(line)
        seq.extend(
            from_node(child, budget, depth + 1, (*at, i)) for i, child in enumerate(node.value)
        )
        return seq
    if isinstance(node, yaml.MappingNode):
        out = Map(line)
        for knode, vnode in node.value:
            kline = knode.start_mark.line + 1
            if not isinstance(knode, yaml.ScalarNode):
                raise EntryError(
                    kline,
                    "mapping keys must be plain strings",
                    knode.start_mark.column + 1,
                    json_path(at),
                )
            key = str(knode.value)
            if key in out:
                raise EntryError(
                    kline,
                    f"duplicate key {key!r}",
                    knode.start_mark.column + 1,
                    json_path((*at, key)),
                    out.lines[key],
                )
            out[key] = from_node(vnode, budget, depth + 1, (*at, key))
            out.lines[key] = kline
        return out
    raise EntryError(line, "unsupported YAML node")  # pragma: no cover


#: One route entry exactly as ``lnetgen generate`` (and ``lnetctl export``) print it: a net
#: name, a gateway NID without ranges or IPv6 colons, integers (anything else: block_parse).
_ROUTE_ENTRY = re.compile(
    r"    - net: ([a-z][a-z0-9]*)\n"
    r"      gateway: ([0-9A-Za-z.]+@[a-z][a-z0-9]*)\n"
    r"      hop: (-?[0-9]{1,10})\n"
    r"      priority: ([0-9]{1,10})\n"
)


def route_section(text: str) -> Any:
    """The tree ``block_parse`` gives for a ``route:`` section of plain four-key entries
    (net, gateway, hop, priority), read with one regular expression; None for any other text.
    A tree holds thousands of such sections (one per client class), so this is the hot path;
    tests check it against ``block_parse``."""
    if not text.startswith("route:\n") or not text.endswith("\n"):
        return None
    body = text[7:]
    seq = Seq(2)
    pos = 0
    line = 2
    match = _ROUTE_ENTRY.match
    while pos < len(body):
        m = match(body, pos)
        if m is None:
            return None
        entry = Map(line)
        net, gw, hop, prio = m.groups()
        if net in _NULLS:
            return None  # "net: null" is no name: block_parse says so
        entry["net"], entry["gateway"], entry["hop"], entry["priority"] = net, gw, hop, prio
        entry.lines = {"net": line, "gateway": line + 1, "hop": line + 2, "priority": line + 3}
        seq.append(entry)
        line += 4
        pos = m.end()
    if not seq:
        return None
    top = Map(1)
    top["route"] = seq
    top.lines["route"] = 1
    return top


def yaml_parse(text: str) -> Any:
    """Block parser first, PyYAML for anything else; raises ``EntryError`` (relative lines)."""
    fast = route_section(text)
    if fast is not None:
        return fast
    try:
        return block_parse(text)
    except Unsupported:
        pass
    tab = _TAB_INDENT.search(text)
    if tab:
        raise EntryError(
            text.count("\n", 0, tab.start()) + 1,
            "tab character in the indentation (YAML indents with spaces only)",
        )
    try:
        # PyYAML's C composer recurses once per level and overflows the C stack (a crash) on
        # deep nesting: count the parser's events first
        yamlsrc.check_depth(text, "")
        docs = list(yaml.compose_all(text, Loader=_Loader))
    except InputError as exc:  # from check_depth
        d = exc.diagnostics[0]
        raise EntryError(d.line, d.message, d.col, d.path) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or str(exc)
        if exc.context:
            problem += f" ({exc.context})"
        raise EntryError(
            mark.line + 1 if mark else 0,
            f"YAML syntax error: {problem}",
            mark.column + 1 if mark else 0,
        ) from None
    except yaml.YAMLError as exc:
        raise EntryError(0, f"YAML error: {exc}") from None
    except RecursionError:
        raise EntryError(0, "YAML nested too deeply") from None
    docs = [d for d in docs if d is not None]
    if not docs:
        return None
    values = [from_node(d, [MAX_VALUES]) for d in docs]
    if len(values) == 1:
        return values[0]
    merged = Map(values[0].line if isinstance(values[0], Map) else 1)
    for v in values:
        if not isinstance(v, Map):
            raise EntryError(getattr(v, "line", 1), "expected a mapping of lnetctl sections")
        for k, item in v.items():
            if k in merged:
                raise EntryError(v.lines[k], f"section {k!r} appears twice", 1, json_path([k]))
            merged[k] = item
            merged.lines[k] = v.lines[k]
    return merged
