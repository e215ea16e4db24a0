"""YAML with source positions.

PyYAML's composed node tree carries line/column marks; we compose (C loader when available),
then construct plain Python values ourselves so that we can (1) record where every value came
from, keyed by its JSON path, (2) reject duplicate keys, which PyYAML silently overwrites, and
(3) bound the work an alias bomb can cause.  Scalars are resolved by PyYAML's safe constructor,
so YAML 1.1 conversions (``on`` -> True, ``0755`` -> 493) still happen; ``Source.raw`` keeps the
original text so validation can point out the trap.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from lnetgen.diagnostics import Diagnostic, InputError, json_path

try:  # the C composer is several times faster on big inventories
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

#: Refuse inputs larger than this before parsing (a site inventory is a few MB at most).
MAX_BYTES = 64 * 1024 * 1024
#: Upper bound on constructed values; alias expansion beyond it is an error, not an OOM.
MAX_NODES = 2_000_000

Path = tuple[str | int, ...]


@dataclass
class Source:
    """A loaded document: its data and where each JSON path sits in the file."""

    file: str
    data: Any
    marks: dict[Path, tuple[int, int]] = field(default_factory=dict)
    raw: dict[Path, tuple[str, str | None]] = field(default_factory=dict)  # text, style

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
        severity: str = "error",
        hint: str = "",
    ) -> Diagnostic:
        line, col = self.where(path)
        return Diagnostic(
            file=self.file,
            line=line,
            col=col,
            severity=severity,  # type: ignore[arg-type]
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
        if self.count > MAX_NODES:
            raise InputError(
                [
                    Diagnostic(
                        self.file,
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
        self.marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.ScalarNode):
            self.raw[path] = (node.value, node.style)
            value = self.constructor.construct_object(node, deep=True)
            if isinstance(value, bytes | bytearray):
                return value.decode("latin-1")
            if not isinstance(value, str | int | float | bool | type(None)):
                return str(node.value)  # timestamps, sets... keep the text; schema decides
            return value
        if isinstance(node, yaml.SequenceNode):
            return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            first: dict[Any, int] = {}
            for knode, vnode in node.value:
                if knode.tag == "tag:yaml.org,2002:merge":
                    self.diags.append(self._d(knode, path, "E-YAML-MERGE",
                                              "YAML merge keys (<<) are not supported"))
                    continue
                key = self.constructor.construct_object(knode, deep=True) if isinstance(
                    knode, yaml.ScalarNode) else None
                if not isinstance(key, str | int | bool | float) or isinstance(key, bool):
                    if key is None or not isinstance(key, str | int | float):
                        self.diags.append(self._d(knode, path, "E-YAML-KEY",
                                                  "mapping keys must be plain strings"))
                        continue
                key = str(key) if not isinstance(key, str) else key
                if key in first:
                    self.diags.append(
                        self._d(knode, (*path, key), "E-YAML-DUPKEY",
                                f"duplicate key {key!r} (first at line {first[key]}); "
                                "YAML would silently keep only the last value")
                    )
                    continue
                first[key] = knode.start_mark.line + 1
                out[key] = self.build(vnode, (*path, key))
                # point a key's location at the key itself, which is where editors jump
                self.marks[(*path, key)] = (knode.start_mark.line + 1, knode.start_mark.column + 1)
            return out
        raise AssertionError(f"unknown YAML node {node!r}")  # pragma: no cover

    def _d(self, node: yaml.Node, path: Path, code: str, msg: str) -> Diagnostic:
        return Diagnostic(self.file, node.start_mark.line + 1, node.start_mark.column + 1,
                          "error", code, json_path(path), msg)


def _problem_diag(file: str, exc: yaml.YAMLError) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else 0
    col = mark.column + 1 if mark is not None else 0
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    msg = f"YAML syntax error: {problem}" + (f" ({context})" if context else "")
    return Diagnostic(file, line, col, "error", "E-YAML-SYNTAX", "$", msg)


def read_text(path: str, max_bytes: int = MAX_BYTES) -> str:
    """Read a UTF-8 text file, turning every OS-level problem into an ``InputError``."""

    def fail(code: str, msg: str) -> InputError:
        return InputError([Diagnostic(path, 0, 0, "error", code, "$", msg)])

    try:
        if os.path.isdir(path):
            raise fail("E-FILE", "is a directory, expected a file")
        size = os.path.getsize(path)
        if size > max_bytes:
            raise fail("E-FILE-SIZE", f"file is {size} bytes, over the {max_bytes}-byte limit")
        with open(path, "rb") as fh:
            blob = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise fail("E-FILE", "no such file") from None
    except PermissionError:
        raise fail("E-FILE", "permission denied") from None
    except OSError as exc:
        raise fail("E-FILE", f"cannot read: {exc.strerror or exc}") from None
    if b"\x00" in blob:
        line = blob[: blob.index(b"\x00")].count(b"\n") + 1
        raise InputError([Diagnostic(path, line, 0, "error", "E-FILE-BINARY", "$",
                                     "file contains a NUL byte; expected a text file")])
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = blob[: exc.start].count(b"\n") + 1
        raise InputError([Diagnostic(path, line, 0, "error", "E-FILE-ENCODING", "$",
                                     "file is not valid UTF-8")]) from None


def load_text(text: str, file: str) -> Source:
    """Parse one YAML document; raise ``InputError`` on syntax errors or an empty document."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise InputError([_problem_diag(file, exc)]) from None
    except RecursionError:
        raise InputError([Diagnostic(file, 0, 0, "error", "E-YAML-DEPTH", "$",
                                     "document is nested too deeply")]) from None
    if node is None:
        raise InputError([Diagnostic(file, 1, 1, "error", "E-EMPTY", "$", "the document is empty")])
    builder = _Builder(file)
    try:
        data = builder.build(node, ())
    except yaml.YAMLError as exc:  # bad scalar for its tag, e.g. !!int x
        raise InputError([_problem_diag(file, exc)]) from None
    except RecursionError:
        raise InputError([Diagnostic(file, 0, 0, "error", "E-YAML-DEPTH", "$",
                                     "document is nested too deeply")]) from None
    if builder.diags:
        raise InputError(builder.diags)
    return Source(file=file, data=data, marks=builder.marks, raw=builder.raw)


def load_file(path: str) -> Source:
    """``read_text`` + ``load_text``."""
    return load_text(read_text(path), path)
