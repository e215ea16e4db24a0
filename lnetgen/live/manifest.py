"""Reading a directory ``lnetgen generate`` wrote: its ``manifest.json`` names which hosts each
lnetctl (else modprobe) file configures, and every such file is read once for all its hosts.
The files name interfaces, not addresses: the NIDs the manifest records for routers and
servers stand for theirs (``lnetgen.live.recorded``).  A host's UDSP rules are those of its
``udsp`` script (``udsp/<class>.sh``, run after the import), else none: the lnetctl files
lnetgen writes carry none (an older tree's ``udsp:`` block is kept as it reads)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from typing import Any

from lnetgen import nodes, strictjson
from lnetgen.diagnostics import InputError
from lnetgen.live.cache import ParseCache
from lnetgen.live.dump import read_dump_bytes
from lnetgen.live.errors import LiveParseError, clip, path_error
from lnetgen.live.files import read_bytes
from lnetgen.live.recorded import Recorded, changed_note, recorded_nids, with_nids, with_note
from lnetgen.live.state import HostState, LiveSet
from lnetgen.live.udsp_file import UDSP_FORMAT, read_rules
from lnetgen.udsp import Rule

#: Most host names all entries of a generated tree's manifest may name together (every host
#: of a site appears once per format).
MAX_MANIFEST_HOSTS = 4_000_000

#: Formats a generated tree's dumps are read from, the primary one first.
_GENERATED_FORMATS = ("lnetctl", "modprobe")


#: (format, path, hosts, recorded sha256 or "") of one lnetctl or modprobe file of a manifest
_Entry = tuple[str, str, str, str]


#: A manifest as read: the document and its text.
Loaded = tuple[Any, str]


def load_manifest(mpath: str, root: str) -> Loaded:
    """The JSON document ``mpath`` (in the directory ``root``) and its text.  Raises
    ``InputError`` (``E-LIVE-PATH``; ``E-LIVE-LINK`` when it is a symbolic link out of
    ``root``, never read)."""
    try:
        data = read_bytes(mpath, root)
        manifest = strictjson.loads(data)
    except LiveParseError as exc:
        if exc.diagnostic.code == "E-LIVE-LINK":
            raise InputError([exc.diagnostic]) from None
        raise path_error(mpath, f"not an lnetgen manifest: {exc.diagnostic.message}") from None
    except OSError as exc:
        raise path_error(mpath, f"cannot read: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # bad JSON or UTF-8; JSON nested too deeply
        raise path_error(mpath, f"not an lnetgen manifest: {clip(str(exc), 200)}") from None
    return manifest, data.decode("utf-8")


def _manifest_entries(mpath: str, loaded: Loaded, live: LiveSet) -> tuple[list[_Entry], Recorded]:
    """The manifest's lnetctl and modprobe files, checked for shape, and the NIDs it records;
    sets ``live.generated``.  Raises ``InputError`` (``E-LIVE-PATH``)."""
    manifest, text = loaded
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, list) or not all(isinstance(e, dict) for e in files):
        raise path_error(
            mpath, 'not an lnetgen manifest: expected an object whose "files" is a list of objects'
        )
    live.generated = {
        k: clip(str(v), 200) if isinstance(v, str | int | float) else ""
        for k in ("site", "strategy", "inventory_digest", "lnetgen_version")
        for v in (manifest.get(k, ""),)
    }
    out = []
    for i, entry in enumerate(files):
        fmt, rel, hosts = entry.get("format"), entry.get("path"), entry.get("hosts")
        if fmt not in _GENERATED_FORMATS or not hosts:
            continue
        if not isinstance(rel, str) or not isinstance(hosts, str):
            raise path_error(
                mpath, f'not an lnetgen manifest: files[{i}] needs a text "path" and "hosts"'
            )
        if not rel or not rel.isprintable():
            raise path_error(
                mpath,
                f"file path '{clip(rel)}' is empty or holds characters that cannot be printed",
            )
        if os.path.isabs(rel) or ".." in rel.split("/"):
            raise path_error(mpath, f"file path {rel!r} leaves the directory")
        sha = entry.get("sha256")
        out.append((str(fmt), rel, hosts, sha if isinstance(sha, str) else ""))
    out.sort(key=lambda e: (_GENERATED_FORMATS.index(e[0]), e[1]))
    return out, recorded_nids(manifest, text, mpath)


def _udsp_scripts(mpath: str, loaded: Loaded) -> dict[str, list[str]]:
    """The UDSP script of each host (relative path) -> its hosts; entries of another shape are
    left to the checks of the lnetctl entries.  Raises ``InputError`` (``E-LIVE-PATH``)."""
    manifest, _text = loaded
    files = manifest.get("files") if isinstance(manifest, dict) else None
    out: dict[str, list[str]] = {}
    total = 0
    for entry in files if isinstance(files, list) else ():
        if not isinstance(entry, dict) or entry.get("format") != UDSP_FORMAT:
            continue
        rel, hosts = entry.get("path"), entry.get("hosts")
        if not isinstance(rel, str) or not isinstance(hosts, str) or not rel or not hosts:
            continue
        if not rel.isprintable() or os.path.isabs(rel) or ".." in rel.split("/"):
            raise path_error(mpath, f"file path '{clip(rel)}' leaves the directory")
        total += nodes.count(hosts)
        if total > MAX_MANIFEST_HOSTS:
            raise path_error(
                mpath, f"the udsp entries may name at most {MAX_MANIFEST_HOSTS} hosts in all"
            )
        try:
            out.setdefault(rel, []).extend(nodes.expand(hosts))
        except nodes.NodeSyntaxError as exc:
            raise path_error(mpath, f"bad hosts '{clip(hosts)}': {clip(str(exc), 200)}") from None
    return out


def _file_of_each_host(
    path: str, loaded: Loaded, live: LiveSet
) -> tuple[dict[str, str], dict[str, str], Recorded]:
    """host -> the file (relative to ``path``) its state is read from, lnetctl first; file ->
    its recorded sha256; the NIDs the manifest records.  Sets ``live.generated``."""
    mpath = os.path.join(path, "manifest.json")
    chosen: dict[str, str] = {}
    total = 0
    entries, recorded = _manifest_entries(mpath, loaded, live)
    for _fmt, rel, hosts, _sha in entries:
        size = nodes.count(hosts)  # a node set is sized before ClusterShell expands it
        total += size
        if total > MAX_MANIFEST_HOSTS:
            raise path_error(
                mpath,
                f"hosts '{clip(hosts)}' of {rel!r} name {size} hosts: the manifest's entries "
                f"may name at most {MAX_MANIFEST_HOSTS} in all",
            )
        try:
            names = nodes.expand(hosts)
        except nodes.NodeSyntaxError as exc:
            raise path_error(mpath, f"bad hosts '{clip(hosts)}': {clip(str(exc), 200)}") from None
        for h in names:
            if nodes.HOSTNAME_RE.match(h) is None:
                raise path_error(
                    mpath, f"bad hosts '{clip(hosts)}': '{clip(h)}' is not a host name"
                )
            chosen.setdefault(h, rel)  # lnetctl first: it is the primary format
    if not chosen:
        raise path_error(path, "the manifest lists no lnetctl or modprobe files")
    return chosen, {rel: sha for _f, rel, _h, sha in entries}, recorded


def read_generated(path: str, live: LiveSet, cache: ParseCache, loaded: Loaded) -> None:
    """Read the generated tree ``path`` into ``live``: hosts that share a file share its
    state; a router's or server's state shows the NIDs the manifest records for it, when its
    file is still the one lnetgen wrote (``lnetgen.live.recorded``).  Raises ``InputError``
    (``E-LIVE-PATH``) when the manifest (``loaded``, by ``load_manifest``) cannot be used."""
    chosen, sha_of, recorded = _file_of_each_host(path, loaded, live)
    rules_of: dict[str, tuple[str, tuple[Rule, ...] | None]] = {}
    for rel, hosts in sorted(_udsp_scripts(os.path.join(path, "manifest.json"), loaded).items()):
        full = os.path.join(path, rel)
        try:
            got: tuple[str, tuple[Rule, ...] | None] = (full, read_rules(full, path))
        except LiveParseError as exc:  # the rules are unknown, not none: not compared
            live.errors.append(exc.diagnostic)
            live.error_hosts.update(hosts)
            got = (full, None)
        rules_of.update(dict.fromkeys(hosts, got))
    by_file: dict[str, list[str]] = {}
    for h, rel in chosen.items():
        by_file.setdefault(rel, []).append(h)
    for rel in sorted(by_file):
        full = os.path.join(path, rel)
        members = by_file[rel]
        try:
            state, data = read_dump_bytes(full, cache=cache, root=path)
        except LiveParseError as exc:
            live.errors.append(exc.diagnostic)
            live.error_hosts.update(members)
            for h in members:
                live.files[h] = (full,)
            continue
        intact = any(h in recorded for h in members) and (
            hashlib.sha256(data).hexdigest() == sha_of.get(rel)
        )
        shared: dict[tuple[int, int], HostState] = {}  # hosts of one file share their state
        for h in members:
            live.files[h] = (full,)
            mine = _as_recorded(state, recorded.get(h), intact, rel)
            script = rules_of.get(h)
            key = (id(mine), id(script))
            one = shared.get(key)
            if one is None:
                one = shared[key] = _with_rules(mine, script)
            live.hosts[h] = one


def _with_rules(state: HostState, script: tuple[str, tuple[Rule, ...] | None] | None) -> HostState:
    """``state`` with the rules of the host's UDSP script (its path and rules; it deletes every
    rule before it adds its own; rules None: unknown, the script could not be read); without a
    script (``None``), the rules of its file (an older tree's ``udsp:``), or none."""
    if script is not None:
        return dataclasses.replace(state, udsp=script[1], udsp_file=script[0])
    return state if state.udsp is not None else dataclasses.replace(state, udsp=())


def _as_recorded(
    state: HostState, nids: dict[str, tuple[str, ...]] | None, intact: bool, rel: str
) -> HostState:
    """A host's ``state`` with the NIDs recorded for it (when its file is intact), or with a
    note that they are not compared (when the file changed since lnetgen wrote it)."""
    if not nids or state.nets is None or state.nets.nids:
        return state
    return with_nids(state, nids) if intact else with_note(state, changed_note(rel))
