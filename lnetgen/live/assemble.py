"""Host assembly: a live PATH read into one state per host.

A directory holds one or more files per host, named ``<host>`` or ``<host>.<anything>``; a
directory written by ``lnetgen generate`` (it has ``manifest.json``) gives every host of every
lnetctl (else modprobe) file.  Only regular files are read, and only under names that start
with a host name: anything else is reported, never read, folded or printed as it is.  No
symbolic link below PATH is followed out of it (``lnetgen.live.files.read_bytes``).  The dumps
of one host merge into one state, the first dump that shows a part giving it.
"""

from __future__ import annotations

import os
import stat

from lnetgen.live.cache import ParseCache
from lnetgen.live.dump import read_dump
from lnetgen.live.errors import LiveParseError, path_error
from lnetgen.live.files import file_kind, host_of
from lnetgen.live.manifest import read_generated
from lnetgen.live.state import NO_PEERS, HostState, LiveSet, NetTable, RouteTable
from lnetgen.progress import NO_PROGRESS, Progress
from lnetgen.udsp import Rule


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
    tunables: dict[str, int] | None = None
    shown: set[str] = set()
    explicit = False
    rules: tuple[Rule, ...] | None = None
    for s in states:
        if s.udsp is not None:
            name0 = s.sources[0] if s.sources else "?"
            if rules is None:
                rules, src["udsp"] = s.udsp, name0
            elif [r.key() for r in rules] != [r.key() for r in s.udsp]:
                health.append(
                    f"{name0} and {src['udsp']} disagree on UDSP rules; using {src['udsp']}"
                )
        explicit = explicit or s.tunables_explicit
        if s.tunables is not None:
            tunables = tunables if tunables is not None else {}
            for key, value in s.tunables.items():
                tunables.setdefault(key, value)  # the first dump that shows it
            shown |= s.tunables_shown
        name = s.sources[0] if s.sources else "?"
        if s.nets is not None:
            if nets is None:
                nets, src["nets"] = s.nets, name
            elif s.nets.nets and dict(nets.nets) != dict(s.nets.nets):
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
        peers or NO_PEERS,
        tuple(dict.fromkeys(health)),
        tuple(x for s in states for x in s.sources),
        tuple(dict.fromkeys(f for s in states for f in s.formats)),
        tunables,
        frozenset(shown),
        explicit,
        rules,
    )


def read_live(path: str, progress: Progress = NO_PROGRESS) -> LiveSet:
    """Read a live PATH: a directory of per-host dumps, one dump, or a ``lnetgen generate``
    directory.  Unparsable dumps, and files whose name is not a host name, become
    ``LiveSet.errors``; raises ``InputError`` when PATH itself cannot be read, is neither a
    regular file nor a directory, or holds no dump."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise path_error(path, "no such file or directory") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise path_error(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    cache = ParseCache()
    live = LiveSet(path)
    if stat.S_ISDIR(st.st_mode):
        mpath = os.path.join(path, "manifest.json")
        if os.path.islink(mpath) or os.path.isfile(mpath):  # a link is refused, not skipped
            read_generated(path, live, cache)
        else:
            _read_directory(path, live, cache, progress)
        return live
    if not stat.S_ISREG(st.st_mode):
        raise path_error(
            path, f"is {file_kind(st.st_mode)}, expected a dump file or a directory of dumps"
        )
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as exc:
        raise path_error(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        host = host_of(path)
    except LiveParseError as exc:
        live.errors.append(exc.diagnostic)
        return live
    _read_host(host, [path], live, cache, "")
    return live


def _read_directory(path: str, live: LiveSet, cache: ParseCache, progress: Progress) -> None:
    """Read a directory of per-host dumps into ``live``, host by host."""
    try:
        with os.scandir(path) as entries:
            # anything but a directory is a dump: pipes, devices and links that leave the
            # directory are refused by read_dump (is_dir without following: a looping link
            # is one bad dump, not an unreadable directory)
            names = sorted(
                e.name
                for e in entries
                if not e.name.startswith(".")
                and not e.is_dir(follow_symlinks=False)
                and not (e.is_symlink() and os.path.isdir(e.path))
            )
    except OSError as exc:
        raise path_error(path, f"cannot list: {exc.strerror or exc}") from None
    if not names:
        raise path_error(path, "the directory holds no dump files")
    by_host: dict[str, list[str]] = {}
    for name in names:
        full = os.path.join(path, name)
        try:
            by_host.setdefault(host_of(full), []).append(full)
        except LiveParseError as exc:
            live.errors.append(exc.diagnostic)
    tick = progress("reading dumps", len(by_host))
    for host in sorted(by_host):
        _read_host(host, by_host[host], live, cache, path)
        tick()


def _read_host(host: str, files: list[str], live: LiveSet, cache: ParseCache, root: str) -> None:
    """Read and merge the dumps of one host into ``live`` (links confined to ``root``)."""
    states = []
    for f in files:
        try:
            states.append(read_dump(f, host=host, cache=cache, root=root))
        except LiveParseError as exc:
            live.errors.append(exc.diagnostic)
            live.error_hosts.add(host)
    live.files[host] = tuple(files)
    if states:
        live.hosts[host] = merge_states(states)
