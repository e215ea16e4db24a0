"""YAML with source positions.

PyYAML's composed node tree carries line/column marks; we compose (C loader when available),
then construct plain Python values ourselves so that we can (1) record where every value came
from, keyed by its JSON path, (2) reject duplicate keys, which PyYAML silently overwrites, and
(3) bound the work an alias bomb can cause.  Scalars are resolved by PyYAML's safe constructor,
so YAML 1.1 conversions (``on`` -> True, ``0755`` -> 493) still happen; ``Source.raw`` keeps the
original text so validation can point out the trap.  Mapping keys are always strings, taken as
written (``on:`` is the key ``"on"``), as in JSON.  Every problem is an ``InputError`` carrying
diagnostics; nothing here raises anything else for bad input.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any

import yaml

from lnetgen import inputs
from lnetgen.bounded import read_at_most
from lnetgen.diagnostics import Diagnostic, InputError, Severity, json_path, show

try:  # the C composer is several times faster on big inventories
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

#: Refuse inputs larger than this before parsing (a site inventory is a few MB at most:
#: Blue Waters' is 0.2 MB; 100,000 clients listed one by one take about 8 MB).
MAX_BYTES = 32 * 1024 * 1024
#: Upper bound on values (scalars, keys, lists, mappings), counted while the text is parsed --
#: before PyYAML builds its node tree, which costs ~350 bytes a value -- and again after alias
#: expansion, so any input stays within a few hundred MB (about 1 kB of memory a value in all;
#: 480,000 values validate under a 1 GiB address-space limit).  Blue Waters has 26,206.
MAX_NODES = 500_000
#: Deepest nesting of lists and mappings accepted (an inventory needs about 6).
MAX_DEPTH = 100

Path = tuple[str | int, ...]

_SEQ = "tag:yaml.org,2002:seq"
_MAPS = frozenset(("tag:yaml.org,2002:map", "tag:yaml.org,2002:set"))
#: Tags a plain inventory may carry (implicitly resolved or written as ``!!str`` etc.).
_CORE_TAGS = frozenset(
    "tag:yaml.org,2002:" + t
    for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp", "binary", "set")
)


@dataclass
class Source:
    """A loaded document: its data and where each JSON path sits in the file."""

    file: str
    data: Any
    marks: dict[Path, tuple[int, int]] = field(default_factory=dict)
    #: scalar text as written and its style: None for plain, '"' or "'" for quoted, '|' '>' ...
    raw: dict[Path, tuple[str, str | None]] = field(default_factory=dict)

    def where(self, path: Path) -> tuple[int, int]:
        """Line and column (1-based) of ``path`` or of its nearest located ancestor."""
        p = tuple(path)
        while p:
            if p in self.marks:
                return self.marks[p]
            p = p[:-1]
        return self.marks.get((), (1, 1))

    def diag(
        self,
        path: Path,
        code: str,
        message: str,
        severity: Severity = "error",
        hint: str = "",
    ) -> Diagnostic:
        """A diagnostic located at ``path`` (or its nearest located ancestor)."""
        line, col = self.where(path)
        return Diagnostic(
            file=self.file,
            line=line,
            col=col,
            severity=severity,
            code=code,
            path=json_path(path),
            message=message,
            hint=hint,
        )


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.count = 0
        self.marks: dict[Path, tuple[int, int]] = {}
        self.raw: dict[Path, tuple[str, str | None]] = {}
        self.diags: list[Diagnostic] = []
        self.constructor = yaml.SafeLoader("")  # only its scalar constructors are used

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.count += 1
        if self.count > MAX_NODES:  # _first_overflow should have caught this already
            raise _size_error(self.file, node, path)
        self.marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if (
            node.tag not in _CORE_TAGS
            or (isinstance(node, yaml.SequenceNode) and node.tag != _SEQ)
            or (isinstance(node, yaml.MappingNode) and node.tag not in _MAPS)
        ):
            tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
            kind = {yaml.ScalarNode: "a scalar", yaml.SequenceNode: "a list"}.get(
                type(node), "a mapping"
            )
            self.diags.append(
                self._d(node, path, "E-YAML-TAG", f"YAML tag {tag} on {kind} is not supported")
            )
            return None
        if isinstance(node, yaml.ScalarNode):
            # style None means plain (unquoted); the C loader says '' for that
            self.raw[path] = (node.value, node.style or None)
            try:
                value = self.constructor.construct_object(node, deep=True)
            except (ValueError, KeyError, TypeError, AttributeError, OverflowError):
                # an explicit tag on text that does not fit it, e.g. `!!int nope`, or a number
                # longer than Python converts (4,300 digits): quoted back cut short
                kind = str(node.tag).rsplit(":", 1)[-1]
                text = str(node.value)
                what = f"is not a valid !!{kind}"
                if kind == "int" and re.fullmatch(r"[-+]?[0-9_]{61,}", text):
                    what = "is a number too long to read"
                self.diags.append(self._d(node, path, "E-YAML-SYNTAX", f"{show(text)} {what}"))
                return None
            if isinstance(value, bytes | bytearray):
                return value.decode("latin-1")
            if not isinstance(value, str | int | float | bool | type(None)):
                return str(node.value)  # timestamps, sets... keep the text; schema decides
            return value
        if isinstance(node, yaml.SequenceNode):
            return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        raise AssertionError(f"unknown YAML node {node!r}")  # pragma: no cover

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first: dict[str, int] = {}
        for knode, vnode in node.value:
            if knode.tag == "tag:yaml.org,2002:merge":
                self.diags.append(
                    self._d(knode, path, "E-YAML-MERGE", "YAML merge keys (<<) are not supported")
                )
                continue
            if not isinstance(knode, yaml.ScalarNode):
                self.diags.append(
                    self._d(knode, path, "E-YAML-KEY", "mapping keys must be plain strings")
                )
                continue
            # the key as written: JSON-like documents have string keys, and `on:` stays "on"
            key = str(knode.value)
            if key in first:
                self.diags.append(
                    self._d(
                        knode,
                        (*path, key),
                        "E-YAML-DUPKEY",
                        f"duplicate key {key!r} (first at line {first[key]}); "
                        "YAML would silently keep only the last value",
                    )
                )
                continue
            first[key] = knode.start_mark.line + 1
            out[key] = self.build(vnode, (*path, key))
            # point a key's location at the key itself, which is where editors jump
            self.marks[(*path, key)] = (knode.start_mark.line + 1, knode.start_mark.column + 1)
        return out

    def _d(self, node: yaml.Node, path: Path, code: str, msg: str) -> Diagnostic:
        return Diagnostic(
            self.file,
            node.start_mark.line + 1,
            node.start_mark.column + 1,
            "error",
            code,
            json_path(path),
            msg,
        )


def _problem_diag(file: str, exc: yaml.YAMLError, text: str = "") -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else 0
    col = mark.column + 1 if mark is not None else 0
    position = getattr(exc, "position", None)  # ReaderError: bad character, no mark
    if mark is None and isinstance(position, int) and text:
        line = text.count("\n", 0, position) + 1
        col = position - (text.rfind("\n", 0, position) + 1) + 1
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or str(exc)
    context = getattr(exc, "context", None)
    cmark = getattr(exc, "context_mark", None)
    msg = f"YAML syntax error: {problem}"
    if context and str(context).startswith("while"):
        msg += f" ({context}"
        if cmark is not None and mark is not None and cmark.line != mark.line:
            msg += f" that started at line {cmark.line + 1}"
        msg += ")"
    elif context:
        msg = f"YAML syntax error: {context}, {problem}"
    hint = ""
    if "tab" in str(problem):
        hint = "YAML indentation must use spaces, not tabs"
    elif "found another document" in str(problem):
        hint = "an inventory is one YAML document; remove the extra '---'"
    return Diagnostic(file, line, col, "error", "E-YAML-SYNTAX", "$", msg, hint)


def read_text(path: str, max_bytes: int = MAX_BYTES) -> str:
    """Read a UTF-8 text file, turning every OS-level problem into an ``InputError``."""

    def fail(code: str, msg: str) -> InputError:
        return InputError([Diagnostic(path, 0, 0, "error", code, "$", msg)])

    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise fail("E-FILE", "is a directory, expected a file")
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):
            # reading would wait for a writer that may never come
            raise fail("E-FILE", "is a named pipe or socket, expected a file")
        if st.st_size > max_bytes:
            raise fail(
                "E-FILE-SIZE", f"file is {st.st_size} bytes, over the {max_bytes}-byte limit"
            )
        with open(path, "rb") as fh:
            blob = read_at_most(fh, max_bytes)
            inputs.remember(os.fstat(fh.fileno()))
    except FileNotFoundError:
        raise fail("E-FILE", "no such file") from None
    except PermissionError:
        raise fail("E-FILE", "permission denied") from None
    except OSError as exc:
        raise fail("E-FILE", f"cannot read: {exc.strerror or exc}") from None
    return decode_text(blob, path, max_bytes)


#: Byte-order marks of the encodings a Windows editor may save a file in, longest first
#: (``iconv -f UTF-16`` reads the mark for the byte order, and drops it).
_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def _utf16_hint(blob: bytes) -> str:
    """How to convert a file that looks like UTF-16 or UTF-32 (a byte-order mark, or NULs at
    every other byte of ASCII text, as a Windows editor saves it); "" otherwise."""
    head = blob[:4096]
    name = next((n for bom, n in _BOMS if head.startswith(bom)), "")
    if not name and len(head) >= 8:
        even, odd = head[0::2], head[1::2]
        if odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
            name = "UTF-16LE"
        elif even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
            name = "UTF-16BE"
    if not name:
        return ""
    return f"it looks like {name} text: convert it, e.g. iconv -f {name} -t UTF-8 FILE > NEW"


def decode_text(blob: bytes, path: str, max_bytes: int = MAX_BYTES) -> str:
    """Bytes read from ``path`` (at most ``max_bytes + 1`` of them) as text: raises
    ``InputError`` for a NUL byte (a binary file), more than ``max_bytes`` bytes, or bytes that
    are not UTF-8, each located at its line."""

    def fail(code: str, msg: str) -> InputError:
        return InputError([Diagnostic(path, 0, 0, "error", code, "$", msg)])

    if b"\x00" in blob:
        line = blob[: blob.index(b"\x00")].count(b"\n") + 1
        raise InputError(
            [
                Diagnostic(
                    path,
                    line,
                    0,
                    "error",
                    "E-FILE-BINARY",
                    "$",
                    "file contains a NUL byte; expected a text file",
                    hint=_utf16_hint(blob),
                )
            ]
        )
    if len(blob) > max_bytes:  # a device or a file that grew while being read
        raise fail("E-FILE-SIZE", f"more than {max_bytes} bytes, over the limit")
    try:
        return blob.decode("utf-8-sig")  # an editor's byte-order mark is not an error
    except UnicodeDecodeError as exc:
        line = blob[: exc.start].count(b"\n") + 1
        raise InputError(
            [Diagnostic(path, line, 0, "error", "E-FILE-ENCODING", "$", "file is not valid UTF-8")]
        ) from None


#: The pure-Python loader: no nesting limit of its own (see ``check_depth``).
_PURE: Any = yaml.SafeLoader


def check_depth(text: str, file: str) -> None:
    """Refuse documents nested deeper than ``MAX_DEPTH``, or holding more than ``MAX_NODES``
    values as written, before composing them.

    libyaml's parser keeps its own stack, but PyYAML's C composer recurses once per level and
    overflows the C stack (a crash, not an exception) long before Python's recursion limit;
    counting start/end events first is cheap and exact.  The events are streamed, so this pass
    holds one event at a time: a runaway file is refused before its node tree is built.
    """
    try:
        _check_depth(text, file, _Loader)
    except yaml.YAMLError as exc:
        if _Loader is _PURE or "nesting depth" not in str(exc):
            raise
        # libyaml 0.2.5+ stops at 1000 levels while scanning ahead, before the events reach
        # ours: the pure-Python scanner (no such limit) finds where ours is passed
        _check_depth(text, file, _PURE)
        raise


def _check_depth(text: str, file: str, loader: Any) -> None:
    depth = 0
    values = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.NodeEvent):  # scalar, alias, list or mapping start
            values += 1
            if values > MAX_NODES:
                mark = event.start_mark
                line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
                raise InputError(
                    [
                        Diagnostic(
                            file,
                            line,
                            col,
                            "error",
                            "E-YAML-SIZE",
                            "$",
                            f"document holds more than {MAX_NODES} values "
                            "(a runaway file?); refusing to load it",
                        )
                    ]
                )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
                raise InputError(
                    [
                        Diagnostic(
                            file,
                            line,
                            col,
                            "error",
                            "E-YAML-DEPTH",
                            "$",
                            f"document is nested too deeply (more than {MAX_DEPTH} levels)",
                        )
                    ]
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


class _Cycle(Exception):
    def __init__(self, node: yaml.Node) -> None:
        self.node = node


def _first_overflow(root: yaml.Node) -> tuple[yaml.Node, Path] | None:
    """Where building would pass ``MAX_NODES`` values, found without building anything.

    Aliases let a few hundred bytes stand for billions of values ("billion laughs").  Sizes of
    shared nodes are computed once, so this costs one visit per distinct node; the walk then
    follows the builder's order to name the same place the builder would.  An alias inside its
    own anchor raises ``_Cycle``.
    """
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def values(node: yaml.MappingNode) -> list[tuple[str, yaml.Node]]:
        return [
            (str(k.value), v)
            for k, v in node.value
            if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge"
        ]

    def size(node: yaml.Node) -> int:
        key = id(node)
        known = sizes.get(key)
        if known is not None:
            return known
        if key in active:
            raise _Cycle(node)
        active.add(key)
        if isinstance(node, yaml.SequenceNode):
            n = 1 + sum(size(c) for c in node.value)
        elif isinstance(node, yaml.MappingNode):
            n = 1 + sum(size(v) for _, v in values(node))
        else:
            n = 1
        active.discard(key)
        sizes[key] = n
        return n

    count = 0

    def walk(node: yaml.Node, path: Path) -> tuple[yaml.Node, Path] | None:
        nonlocal count
        whole = size(node)
        if count + whole <= MAX_NODES:
            count += whole
            return None
        count += 1
        if count > MAX_NODES:
            return node, path
        children: list[tuple[str | int, yaml.Node]] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(enumerate(node.value))
        elif isinstance(node, yaml.MappingNode):
            children = list(values(node))
        for part, child in children:
            found = walk(child, (*path, part))
            if found is not None:
                return found
        return None

    return walk(root, ())


def _size_error(file: str, node: yaml.Node, path: Path) -> InputError:
    return InputError(
        [
            Diagnostic(
                file,
                node.start_mark.line + 1,
                node.start_mark.column + 1,
                "error",
                "E-YAML-SIZE",
                json_path(path),
                f"document expands to more than {MAX_NODES} values "
                "(an alias bomb or a runaway file); refusing to load it",
            )
        ]
    )


def load_text(text: str, file: str) -> Source:
    """Parse one YAML document; raise ``InputError`` on syntax errors or an empty document."""
    try:
        check_depth(text, file)
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise InputError([_problem_diag(file, exc, text)]) from None
    except RecursionError:
        raise InputError(
            [Diagnostic(file, 1, 1, "error", "E-YAML-DEPTH", "$", "document is nested too deeply")]
        ) from None
    if node is None:
        raise InputError(
            [Diagnostic(file, 1, 1, "error", "E-EMPTY", "$", "the file holds no YAML document")]
        )
    builder = _Builder(file)
    try:
        over = _first_overflow(node)
        if over is not None:
            raise _size_error(file, *over)
        data = builder.build(node, ())
    except _Cycle as cyc:
        raise InputError(
            [
                Diagnostic(
                    file,
                    cyc.node.start_mark.line + 1,
                    cyc.node.start_mark.column + 1,
                    "error",
                    "E-YAML-DEPTH",
                    "$",
                    "an alias refers to the list or mapping that contains it (endless nesting)",
                )
            ]
        ) from None
    except yaml.YAMLError as exc:  # bad scalar for its tag, e.g. !!int x
        raise InputError([_problem_diag(file, exc, text)]) from None
    except RecursionError:  # aliases can nest what the text does not: a: &a [*a]
        raise InputError(
            [
                Diagnostic(
                    file,
                    1,
                    1,
                    "error",
                    "E-YAML-DEPTH",
                    "$",
                    "document is nested too deeply (an alias that contains itself?)",
                )
            ]
        ) from None
    if builder.diags:
        raise InputError(builder.diags)
    return Source(file=file, data=data, marks=builder.marks, raw=builder.raw)


def load_file(path: str) -> Source:
    """``read_text`` + ``load_text``."""
    return load_text(read_text(path), path)
