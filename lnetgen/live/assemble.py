"""Host assembly: a live PATH read into one state per host.

A directory holds one or more files per host, named ``<host>`` or ``<host>.<anything>``; a
directory written by ``lnetgen generate`` (it has ``manifest.json``) gives every host of every
lnetctl (else modprobe) file; one written by ``lnetgen collect`` is a directory of dumps like
any other (``lnetgen.live.collected``).  Only regular files are read, and only under names
that start with a host name: anything else is reported, never read, folded or printed as it
is.  No symbolic link below PATH is followed out of it (``lnetgen.live.files.read_bytes``).
The dumps of one host merge into one state (``merge_states``: the running state first).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Any

from lnetgen.live.cache import ParseCache
from lnetgen.live.collected import NOT_DUMPS, collect_failures, is_collect
from lnetgen.live.dump import read_dump
from lnetgen.live.errors import LiveParseError, path_error
from lnetgen.live.files import file_kind, host_of
from lnetgen.live.manifest import load_manifest, read_generated
from lnetgen.live.recorded import with_note
from lnetgen.live.state import (
    CONFIG,
    MODPROBE,
    NO_PEERS,
    HostState,
    LiveSet,
    NetTable,
)
from lnetgen.progress import NO_PROGRESS, Progress

#: Formats that are configuration files (what LNet is given when it is loaded), not what a
#: node runs: an lnet.conf (or a generated lnetctl file) and modprobe options.
CONFIG_FORMATS = frozenset({CONFIG, MODPROBE})


def is_configuration(state: HostState) -> bool:
    """True when ``state`` comes from configuration files only (``CONFIG_FORMATS``)."""
    return bool(state.formats) and all(f in CONFIG_FORMATS for f in state.formats)


def _name(state: HostState) -> str:
    return state.sources[0] if state.sources else "?"


def _pick(
    states: list[HostState],
    what: str,
    get: Callable[[HostState], Any],
    same: Callable[[Any, Any], bool],
    health: list[str],
    empty: Callable[[Any], bool],
    prefer: Callable[[Any], bool] = lambda _v: True,
) -> Any:
    """The value of one part (``get``) for a host, taken from the first
    running dump that shows it, else the first configuration file that shows it -- one that
    sets it before one that leaves it ``empty``, a value ``prefer`` likes before one it
    does not.  Every other dump that shows it otherwise adds a note to ``health``, except a
    configuration file that leaves it empty (the part comes from elsewhere: an lnet.conf that
    ``lnetctl import`` loads leaves the modprobe file without routes)."""
    shown = [(s, v) for s in states if (v := get(s)) is not None]
    if not shown:
        return None

    def rank(item: tuple[HostState, Any]) -> tuple[bool, bool, bool]:
        config = is_configuration(item[0])
        return config, config and empty(item[1]), not prefer(item[1])

    shown.sort(key=rank)  # stable: the order given within each rank
    used, value = shown[0]
    used_config = is_configuration(used)
    for s, v in shown[1:]:
        config = is_configuration(s)
        if same(v, value) or (config and empty(v)) or not prefer(v):
            continue
        name, src = _name(s), _name(used)
        if config and not used_config:
            health.append(
                f"{name} (configuration, used when LNet is loaded again) disagrees with the "
                f"running state on {what}; using {src}"
            )
        else:
            health.append(f"{name} and {src} disagree on {what}; using {src}")
    return value


def merge_states(states: list[HostState]) -> HostState:
    """One state from several dumps of a host (in the order given: file names sorted): each
    part comes from the first dump that shows it, dumps of the running state (lnetctl and lctl
    output) before configuration files (an lnet.conf, modprobe options); a dump that
    disagrees adds a health note (``_pick``).

    Decision: a diff compares the plan with what the nodes *run*.  A configuration file beside
    an export says what LNet will be given at its next load, which may be stale (a modprobe
    file left from an earlier layout): it never overrides the export, and where it disagrees a
    note says so (its other notes, such as modprobe's "no networks=", are left out: they are
    about the next load, not what is compared).  Tunables only a configuration file shows are
    still taken from it, but once a running dump shows tunables the merged state is not
    "configuration" (``tunables_explicit``): an export prints every setting, not only those
    someone chose."""
    if len(states) == 1:
        return states[0]
    health: list[str] = []
    nets = _pick(
        states,
        "networks",
        lambda s: s.nets,
        lambda a, b: dict(a.nets) == dict(b.nets),
        health,
        lambda t: not t.nets,
    )
    if nets is not None and not nets.nids:  # NIDs from a dump that shows them (net show)
        # running dumps first, as for every part: a stale lnet.conf's nid: lines must not
        # hide the address a server runs with
        by_nids = [s for s in sorted(states, key=is_configuration) if s.nets and s.nets.nids]
        with_nids = by_nids[0].nets if by_nids else None
        if with_nids is not None and is_configuration(by_nids[0]):
            health.append(
                "NIDs taken from a configuration file (no running dump shows them): "
                "they may not be the ones LNet runs with"
            )
        if with_nids is not None:
            nets = NetTable(
                nets.nets, with_nids.nids, nets.health + with_nids.health, nets.tunables
            )
    routes = _pick(
        states,
        "routes",
        lambda s: s.routes,
        lambda a, b: dict(a.routes) == dict(b.routes),
        health,
        lambda t: not t.routes,
        lambda t: bool(t.detailed),
    )
    routing = _pick(
        states, "routing", lambda s: s.routing, lambda a, b: a == b, health, lambda _v: False
    )
    rules = _pick(
        states,
        "UDSP rules",
        lambda s: s.udsp,
        lambda a, b: [r.key() for r in a] == [r.key() for r in b],
        health,
        lambda v: not v,
    )
    peers: dict[str, frozenset[str]] = {}
    tunables: dict[str, int] | None = None
    shown: set[str] = set()
    explicit: bool | None = None
    for s in sorted(states, key=is_configuration):  # tunables: running dumps first
        if s.tunables is not None:
            # configuration only when every dump that shows tunables is one
            explicit = s.tunables_explicit and explicit is not False
            tunables = tunables if tunables is not None else {}
            for key, value in s.tunables.items():
                tunables.setdefault(key, value)  # the first dump that shows it
            shown |= s.tunables_shown
        peers.update(s.peers)
    running = not all(is_configuration(s) for s in states)
    for s in states:  # beside a running dump, a configuration file only notes disagreements
        if not (running and is_configuration(s)):
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
        bool(explicit),
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
            loaded = load_manifest(mpath, path)
            if not is_collect(loaded[0]):
                read_generated(path, live, cache, loaded)
                return live
            live.collect_failed = collect_failures(*loaded, mpath)
            # every host may have failed: then all are missing, with collect's reasons
            _read_directory(path, live, cache, progress, skip=NOT_DUMPS, empty_ok=True)
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


def _read_directory(
    path: str,
    live: LiveSet,
    cache: ParseCache,
    progress: Progress,
    skip: frozenset[str] = frozenset(),
    empty_ok: bool = False,
) -> None:
    """Read a directory of per-host dumps into ``live``, host by host; the names in ``skip``
    are no dumps (a collect directory's own files).  Raises ``InputError`` when it holds no
    dump, unless ``empty_ok``."""
    try:
        with os.scandir(path) as entries:
            # anything but a directory is a dump: pipes, devices and links that leave the
            # directory are refused by read_dump (is_dir without following: a looping link
            # is one bad dump, not an unreadable directory)
            names = sorted(
                e.name
                for e in entries
                if not e.name.startswith(".")
                and e.name not in skip
                and not e.is_dir(follow_symlinks=False)
                and not (e.is_symlink() and os.path.isdir(e.path))
            )
    except OSError as exc:
        raise path_error(path, f"cannot list: {exc.strerror or exc}") from None
    if not names and not empty_ok:
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
        live.hosts[host] = _nids_note(merge_states(states))


def _nids_note(state: HostState) -> HostState:
    """``state`` with a note when its dumps show networks but no NID.

    ``lnetctl export --backup`` (what ``/etc/lnet.conf`` usually is), an lnet.conf and a
    modprobe file name interfaces, not addresses, so a moved address would compare equal: the
    NIDs are not compared, and the note says so and how to get them (``lnetgen collect``
    gathers ``lnetctl net show`` beside the export).  Folded across hosts, the note is one
    line for all the hosts whose dumps are of the same kinds."""
    nets = state.nets
    if nets is None or not nets.nets or nets.nids:
        return state
    kinds = ", ".join(state.formats) or "?"
    return with_note(
        state,
        f"NIDs not compared: the dumps ({kinds}) show none; `lnetctl net show` or a full "
        "`lnetctl export` prints them",
    )
