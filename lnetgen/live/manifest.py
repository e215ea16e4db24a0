"""Reading a directory ``lnetgen generate`` wrote: its ``manifest.json`` names which hosts each
lnetctl (else modprobe) file configures, and every such file is read once for all its hosts."""

from __future__ import annotations

import os

from lnetgen import nodes, strictjson
from lnetgen.diagnostics import InputError
from lnetgen.live.cache import ParseCache
from lnetgen.live.dump import read_dump
from lnetgen.live.errors import LiveParseError, clip, path_error
from lnetgen.live.files import read_bytes
from lnetgen.live.state import HostState, LiveSet

#: Most host names all entries of a generated tree's manifest may name together (every host
#: of a site appears once per format).
MAX_MANIFEST_HOSTS = 4_000_000

#: Formats a generated tree's dumps are read from, the primary one first.
_GENERATED_FORMATS = ("lnetctl", "modprobe")


def _manifest_entries(mpath: str, root: str, live: LiveSet) -> list[tuple[str, str, str]]:
    """(format, path, hosts) of the manifest's lnetctl and modprobe files, checked for shape;
    sets ``live.generated``.  Raises ``InputError`` (``E-LIVE-PATH``; ``E-LIVE-LINK`` when
    the manifest is a symbolic link out of ``root``, never read)."""
    try:
        manifest = strictjson.loads(read_bytes(mpath, root))
    except LiveParseError as exc:
        if exc.diagnostic.code == "E-LIVE-LINK":
            raise InputError([exc.diagnostic]) from None
        raise path_error(mpath, f"not an lnetgen manifest: {exc.diagnostic.message}") from None
    except OSError as exc:
        raise path_error(mpath, f"cannot read: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # bad JSON or UTF-8; JSON nested too deeply
        raise path_error(mpath, f"not an lnetgen manifest: {clip(str(exc), 200)}") from None
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
        out.append((str(fmt), rel, hosts))
    out.sort(key=lambda e: (_GENERATED_FORMATS.index(e[0]), e[1]))
    return out


def _file_of_each_host(path: str, live: LiveSet) -> dict[str, str]:
    """host -> the file (relative to ``path``) its state is read from, lnetctl first; sets
    ``live.generated``."""
    mpath = os.path.join(path, "manifest.json")
    chosen: dict[str, str] = {}
    total = 0
    for _fmt, rel, hosts in _manifest_entries(mpath, path, live):
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
    return chosen


def read_generated(path: str, live: LiveSet, cache: ParseCache) -> None:
    """Read the generated tree ``path`` into ``live``: hosts that share a file share its
    state.  Raises ``InputError`` (``E-LIVE-PATH``) when the manifest cannot be used."""
    by_file: dict[str, list[str]] = {}
    for h, rel in _file_of_each_host(path, live).items():
        by_file.setdefault(rel, []).append(h)
    for rel in sorted(by_file):
        full = os.path.join(path, rel)
        members = by_file[rel]
        try:
            state: HostState | None = read_dump(full, cache=cache, root=path)
        except LiveParseError as exc:
            live.errors.append(exc.diagnostic)
            live.error_hosts.update(members)
            state = None
        for h in members:
            live.files[h] = (full,)
            if state is not None:
                live.hosts[h] = state
