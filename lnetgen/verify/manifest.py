"""The manifest of a generated tree as ``verify`` reads it: which file configures which hosts in
which role, and the ``filesystems`` section (MGS, mount NIDs, servers with their NIDs, failover
partners and targets).  Everything is checked for shape here; an unusable manifest is an
``InputError`` (exit 2), never a finding."""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from lnetgen import jsonloc, nodes, strictjson
from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.live import LiveParseError
from lnetgen.live.files import read_bytes
from lnetgen.verify.textfind import Finder

#: Formats whose files are per-host LNet configuration, the primary one first.
LNET_FORMATS = ("lnetctl", "modprobe")
ROLES = ("client", "router", "server")
SERVER_ROLES = ("oss", "mds")


@dataclass(frozen=True)
class Target:
    """One Lustre target of a server: ``demo-OST0000``, its index, kind and mkfs line."""

    name: str
    index: int
    kind: str
    mkfs: str


@dataclass(frozen=True)
class Server:
    """One OSS or MDS of a file system as the manifest describes it."""

    name: str
    role: str
    mgs: bool
    nids: tuple[str, ...]
    client_nids: tuple[str, ...]
    failover: str | None
    targets: tuple[Target, ...] = ()


@dataclass(frozen=True)
class FileSystem:
    """A file system: its MGS, the NIDs clients mount from, the mount spec and its servers."""

    name: str
    mgs: str
    mgs_nids: tuple[str, ...]
    mount: str
    servers: tuple[Server, ...]


@dataclass(frozen=True)
class Entry:
    """One file of the tree: path (relative), format, role, hosts (folded) and file systems."""

    path: str
    format: str
    role: str
    hosts: str
    fs: tuple[str, ...] = ()


@dataclass
class Manifest:
    """A parsed manifest; ``text`` is kept to locate findings in it."""

    path: str
    text: str
    site: str
    strategy: str
    entries: list[Entry]
    filesystems: dict[str, FileSystem]
    server_nets: dict[str, str] = field(default_factory=dict)
    inventory_digest: str = ""
    routers: dict[str, tuple[str, ...]] = field(default_factory=dict)

    _found: dict[tuple[str, ...], int] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _finder: Finder | None = field(default=None, init=False, repr=False, compare=False)
    _newlines: list[int] | None = field(default=None, init=False, repr=False, compare=False)

    def line_of(self, *needles: str) -> int:
        """The line of the first ``needles[-1]`` found after each earlier needle in turn
        (``line_of('"filesystems"', '"scratch":', nid)``); 0 when one is missing.  Each chain
        of needles is searched once, through one index of the text (``Finder``), so locating
        a finding does not read the manifest again."""
        if self._finder is None:
            self._finder = Finder(self.text)
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        pos = 0
        for k in range(1, len(needles) + 1):
            got = self._found.get(needles[:k])
            if got is None:
                got = self._found[needles[:k]] = self._finder.find(needles[k - 1], pos)
            if got < 0:
                return 0
            pos = got
        assert self._newlines is not None
        return bisect_left(self._newlines, pos) + 1


def _bad(path: str, message: str, where: str = "") -> InputError:
    """``E-VERIFY-MANIFEST`` about the value at ``where`` (``files[3]``; the whole file when
    empty); :func:`parse_manifest` adds its line and column."""
    at = f"$.{where}" if where and not where.startswith("[") else f"${where}"
    return InputError([Diagnostic(path, 0, 0, "error", "E-VERIFY-MANIFEST", at, message)])


def _text(obj: dict[str, Any], key: str, where: str, mpath: str, *, empty: bool = False) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or (not value and not empty) or not value.isprintable():
        raise _bad(mpath, "should be a non-empty text", f"{where}.{key}")
    return value


def _nid(text: Any, where: str, mpath: str) -> str:
    if not isinstance(text, str):
        raise _bad(mpath, f"{text!r} is not a NID", where)
    try:
        return str(nodes.parse_nid(text.strip()))
    except nodes.NodeSyntaxError as exc:
        raise _bad(mpath, str(exc), where) from None


def _nids(obj: dict[str, Any], key: str, where: str, mpath: str) -> tuple[str, ...]:
    value = obj.get(key)
    if not isinstance(value, list) or not value:
        raise _bad(mpath, "should be a non-empty list of NIDs", f"{where}.{key}")
    return tuple(_nid(v, f"{where}.{key}[{i}]", mpath) for i, v in enumerate(value))


def _host(obj: dict[str, Any], key: str, where: str, mpath: str) -> str:
    value = _text(obj, key, where, mpath)
    if nodes.HOSTNAME_RE.match(value) is None:
        raise _bad(mpath, f"{value!r} is not a host name", f"{where}.{key}")
    return value


def _target(obj: Any, where: str, mpath: str) -> Target:
    if not isinstance(obj, dict) or not isinstance(obj.get("index"), int):
        raise _bad(mpath, "a target needs 'name', 'index', 'kind' and 'mkfs'", where)
    return Target(
        _text(obj, "name", where, mpath),
        obj["index"],
        _text(obj, "kind", where, mpath),
        _text(obj, "mkfs", where, mpath, empty=True),
    )


def _server(obj: Any, where: str, mpath: str) -> Server:
    if not isinstance(obj, dict):
        raise _bad(mpath, "a server should be an object", where)
    role = obj.get("role")
    if role not in SERVER_ROLES:
        raise _bad(mpath, f"'role' should be one of {', '.join(SERVER_ROLES)}", where)
    failover = obj.get("failover")
    if failover is not None:
        failover = _host(obj, "failover", where, mpath)
    targets = obj.get("targets", [])
    if not isinstance(targets, list):
        raise _bad(mpath, "'targets' should be a list", where)
    return Server(
        _host(obj, "name", where, mpath),
        str(role),
        obj.get("mgs") is True,
        _nids(obj, "nids", where, mpath),
        _nids(obj, "client_nids", where, mpath),
        failover,
        tuple(_target(t, f"{where}.targets[{i}]", mpath) for i, t in enumerate(targets)),
    )


def _filesystem(name: str, obj: Any, mpath: str) -> FileSystem:
    where = f"filesystems.{name}"
    if nodes.NAME_RE.match(name) is None:
        raise _bad(mpath, f"{name!r} is not a file system name", where)
    if not isinstance(obj, dict) or not isinstance(obj.get("servers"), list):
        raise _bad(mpath, "expected an object with 'mgs', 'mgs_nids', 'mount', 'servers'", where)
    servers = tuple(
        _server(s, f"{where}.servers[{i}]", mpath) for i, s in enumerate(obj["servers"])
    )
    return FileSystem(
        name,
        _host(obj, "mgs", where, mpath),
        _nids(obj, "mgs_nids", where, mpath),
        _text(obj, "mount", where, mpath),
        servers,
    )


def _entry(i: int, obj: dict[str, Any], mpath: str) -> Entry | None:
    fmt, rel, hosts, role = obj.get("format"), obj.get("path"), obj.get("hosts"), obj.get("role")
    if not isinstance(rel, str) or not isinstance(hosts, str) or not isinstance(fmt, str):
        raise _bad(mpath, 'needs a text "path", "format" and "hosts"', f"files[{i}]")
    if not hosts or role not in ROLES:
        return None
    if not rel.isprintable() or os.path.isabs(rel) or ".." in rel.split("/"):
        raise _bad(mpath, f"path {rel!r} leaves the directory or cannot be printed", f"files[{i}]")
    fs = obj.get("fs", [])
    if not isinstance(fs, list) or not all(isinstance(f, str) for f in fs):
        raise _bad(mpath, '"fs" should be a list of file system names', f"files[{i}]")
    return Entry(rel, fmt, str(role), hosts, tuple(fs))


def parse_manifest(data: bytes, mpath: str) -> Manifest:
    """A ``Manifest`` from the bytes of ``manifest.json``.  Raises ``InputError``
    (``E-VERIFY-MANIFEST``) naming what is missing or malformed, at its JSON path, line and
    column."""
    try:
        return _parse_manifest(data, mpath)
    except InputError as exc:
        if not any(d.path != "$" and not d.line for d in exc.diagnostics):
            raise
        text = data.decode("utf-8")  # it was read as JSON: the text is UTF-8
        found = jsonloc.placed(exc.diagnostics, mpath, text)
        raise InputError(found) from None


def _parse_manifest(data: bytes, mpath: str) -> Manifest:
    try:
        text = data.decode("utf-8")
        doc = strictjson.loads(text)
    except strictjson.JSONError as exc:
        message = f"not an lnetgen manifest: {exc.msg[:200]}"
        diag = Diagnostic(mpath, exc.line, exc.col, "error", "E-VERIFY-MANIFEST", exc.path, message)
        raise InputError([diag]) from None
    except (ValueError, RecursionError) as exc:
        raise _bad(mpath, f"not an lnetgen manifest: {str(exc)[:200]}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), list):
        raise _bad(mpath, 'not an lnetgen manifest: expected an object whose "files" is a list')
    if "filesystems" not in doc:
        raise _bad(
            mpath,
            'the manifest has no "filesystems" section (MGS, mount NIDs, servers and their '
            "NIDs): regenerate the tree with this version of lnetgen",
        )
    fss = doc["filesystems"]
    if not isinstance(fss, dict) or not fss:
        raise _bad(mpath, "should be an object with at least one file system", "filesystems")
    nets = doc.get("server_nets", {})
    if not isinstance(nets, dict) or not all(isinstance(v, str) for v in nets.values()):
        raise _bad(mpath, "should map fabric names to net names", "server_nets")
    entries = []
    for i, obj in enumerate(doc["files"]):
        if not isinstance(obj, dict):
            raise _bad(mpath, "should be an object", f"files[{i}]")
        entry = _entry(i, obj, mpath)
        if entry is not None:
            entries.append(entry)
    return Manifest(
        mpath,
        text,
        str(doc.get("site", "")),
        str(doc.get("strategy", "")),
        entries,
        {name: _filesystem(name, fss[name], mpath) for name in sorted(fss)},
        {str(k): v for k, v in sorted(nets.items())},
        str(doc.get("inventory_digest", "")),
        _routers(doc.get("routers", {}), mpath),
    )


def _routers(obj: object, mpath: str) -> dict[str, tuple[str, ...]]:
    """The optional ``routers`` map (router -> NIDs) as canonical NIDs."""
    if not isinstance(obj, dict):
        raise _bad(mpath, "should map router names to lists of NIDs", "routers")
    out: dict[str, tuple[str, ...]] = {}
    for name, nids in sorted(obj.items()):
        if not isinstance(nids, list) or not all(isinstance(n, str) for n in nids):
            raise _bad(mpath, "should be a list of NIDs", f"routers.{name}")
        try:
            out[str(name)] = tuple(str(nodes.parse_nid(n)) for n in nids)
        except nodes.NodeSyntaxError as exc:
            raise _bad(mpath, str(exc), f"routers.{name}") from None
    return out


def read_manifest(mpath: str, root: str = "") -> Manifest:
    """Read and parse ``mpath`` (with ``root``, the tree it lies in: a symbolic link out of
    ``root`` is refused, ``E-LIVE-LINK``).  Raises ``InputError`` when it cannot be read or
    used."""
    try:
        data = read_bytes(mpath, root)
    except FileNotFoundError:
        raise _bad(
            mpath, "no such file: verify needs the manifest.json of a generated tree"
        ) from None
    except LiveParseError as exc:
        if exc.diagnostic.code == "E-LIVE-LINK":
            raise InputError([exc.diagnostic]) from None
        raise _bad(mpath, exc.diagnostic.message) from None
    except OSError as exc:
        raise _bad(mpath, f"cannot read: {exc.strerror or exc}") from None
    return parse_manifest(data, mpath)
