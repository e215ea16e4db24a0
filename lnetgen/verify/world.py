"""What ``verify`` proves things about: one *endpoint* per client class (or group of live
clients that show the same state), router and server, each with the LNet state the live readers
build from its file, and the index of which host owns which NID.

A generated tree is read through its manifest: every lnetctl file (a modprobe file where the
host has no lnetctl file) is parsed once by ``lnetgen.live.read_dump`` and stands for all its
hosts.  Live dumps are read by ``lnetgen.live.read_live``; clients are grouped by the state they
show, so 25,000 clients with one route table are proved once.

NIDs are interface addresses: lnet.conf and modprobe files name interfaces, not addresses, so a
host's NIDs come from (1) the NIDs its dump shows (``lnetctl export`` prints them), (2) the
manifest's ``filesystems`` servers, (3) the tree's Ansible ``host_vars`` (the address per net the
lnet role configures).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Container, Iterable
from dataclasses import dataclass, field

import yaml

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.live import HostState, LiveParseError, read_dump, read_live
from lnetgen.live.cache import ParseCache
from lnetgen.live.files import read_bytes
from lnetgen.progress import NO_PROGRESS, Progress, counted
from lnetgen.verify.manifest import LNET_FORMATS, Entry, Manifest

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


@dataclass(frozen=True)
class Endpoint:
    """A client class, router or server: ``hosts`` (folded) share ``state``, read from
    ``file``; ``fs`` names the file systems it belongs to or mounts."""

    name: str
    role: str
    hosts: str
    file: str
    state: HostState
    fs: tuple[str, ...] = ()
    count: int = 1

    @functools.cached_property
    def nets(self) -> frozenset[str]:
        """The nets this endpoint has an NI on (its state does not change: kept)."""
        return frozenset(self.state.nets.nets) if self.state.nets is not None else frozenset()

    @property
    def first_host(self) -> str:
        """The first member (the sample host of a ping plan)."""
        return first_member(self.hosts)


def first_member(folded: str) -> str:
    """The first name of a folded node set, without expanding it (``nid[00001-00096],x`` ->
    ``nid00001``): the first piece, each bracket replaced by its first number."""
    depth, end = 0, len(folded)
    for i, ch in enumerate(folded):
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            end = i
            break
    return re.sub(r"\[([0-9]+)[^\]]*\]", r"\1", folded[:end])


@dataclass
class World:
    """Every endpoint, the endpoint of each router and server host, and the NID index."""

    endpoints: dict[str, Endpoint] = field(default_factory=dict)
    by_host: dict[str, Endpoint] = field(default_factory=dict)  # routers and servers
    nid_owner: dict[str, str] = field(default_factory=dict)
    findings: list[Diagnostic] = field(default_factory=list)
    scoped: set[str] | None = None  # names of the endpoints in the --hosts scope

    def in_scope(self, ep: Endpoint) -> bool:
        """True when ``ep`` has a host in the ``--hosts`` scope (or no scope was given)."""
        return self.scoped is None or ep.name in self.scoped

    def limit(self, hosts: str) -> None:
        """Limit the scope to the endpoints with a host in the node set ``hosts``; a client
        class keeps only its members in it.  Raises ``NodeSyntaxError``."""
        scope = nodes.nodeset(hosts)
        self.scoped = set()
        for name, ep in sorted(self.endpoints.items()):
            inside = scope & nodes.nodeset(ep.hosts)
            if not len(inside):
                continue
            self.scoped.add(name)
            if ep.role == "client":
                self.endpoints[name] = dataclasses.replace(ep, hosts=str(inside), count=len(inside))

    def add(self, ep: Endpoint) -> None:
        self.endpoints[ep.name] = ep
        if ep.role != "client":
            self.by_host[ep.hosts] = ep

    def own(self, host: str, nids: Iterable[str], where: str) -> None:
        """Record ``host`` as the owner of ``nids``; a NID two hosts claim is a finding."""
        for nid in nids:
            other = self.nid_owner.setdefault(nid, host)
            if other != host:
                self.findings.append(
                    Diagnostic(
                        where,
                        0,
                        0,
                        "error",
                        "V-DUP-NID",
                        "$",
                        f"NID {nid} belongs to both {other} and {host}",
                    )
                )


def _chosen_entries(manifest: Manifest) -> list[Entry]:
    """The per-host LNet files: every lnetctl file, and a modprobe file for hosts (by role and
    node set) that have no lnetctl file."""
    lnetctl = [e for e in manifest.entries if e.format == LNET_FORMATS[0]]
    covered = {(e.role, e.hosts) for e in lnetctl}
    extra = [
        e
        for e in manifest.entries
        if e.format == LNET_FORMATS[1] and (e.role, e.hosts) not in covered
    ]
    return sorted(lnetctl + extra, key=lambda e: e.path)


def _unreadable(diag: Diagnostic) -> Diagnostic:
    return Diagnostic(diag.file, diag.line, diag.col, "error", diag.code, diag.path, diag.message)


def read_tree(out_dir: str, manifest: Manifest, progress: Progress = NO_PROGRESS) -> World:
    """The endpoints of the generated tree ``out_dir``.  Raises ``InputError`` when the
    manifest names no LNet file or none of them can be read."""
    world = World()
    cache = ParseCache()
    entries = _chosen_entries(manifest)
    if not entries:
        raise InputError(
            [
                Diagnostic(
                    manifest.path,
                    0,
                    0,
                    "error",
                    "E-VERIFY-TREE",
                    "$",
                    "the manifest lists no lnetctl or modprobe files",
                )
            ]
        )
    tick = progress("reading", len(entries))
    for e in counted(entries, tick):
        full = os.path.join(out_dir, e.path)
        state = _read_file(world, out_dir, e, cache)
        if state is None:
            continue
        name = os.path.basename(e.path).split(".", 1)[0]
        world.add(Endpoint(name, e.role, e.hosts, full, state, e.fs, nodes.count(e.hosts)))
    if not world.endpoints:
        raise InputError(world.findings)
    return world


def _signature(state: HostState) -> tuple[object, ...]:
    """What decides a client's reachability: the same parsed route table (shared by identity
    through the parse cache), nets and routing."""
    nets = tuple(sorted(state.nets.nets)) if state.nets is not None else None
    return (id(state.routes), nets, state.routing)


def read_live_world(
    live_path: str,
    manifest: Manifest,
    scope: Container[str] | None = None,
    tree: str | None = None,
) -> World:
    """Endpoints from live dumps at ``live_path``, roles and file systems from ``manifest``:
    clients of one class that show the same state form one endpoint.  Raises ``InputError``
    when ``live_path`` cannot be read.

    ``scope``: the hosts of ``--hosts``.  A host outside it without a dump is no finding -- a
    partial collection of the site is what ``--hosts`` is for, as in ``diff``, which takes such
    a host to be as the plan says.  So does this: the hosts outside the scope without a dump
    stand in with their file of the generated ``tree`` (the plan: one endpoint per file),
    because the pairs in scope route through them or end at them; without a tree
    (``--manifest`` alone) a router or server is missing, as a host in scope is, and a client
    is left out."""
    live = read_live(live_path)
    world = World()
    world.findings.extend(_unreadable(d) for d in live.errors)
    known: set[str] = set()
    cache = ParseCache()
    for e in _chosen_entries(manifest):
        members = nodes.expand(e.hosts)
        known.update(members)
        groups: dict[tuple[object, ...], list[str]] = {}
        absent: list[str] = []  # outside the scope, no dump: as the tree says
        for h in members:
            state = live.hosts.get(h)
            if state is None:
                outside = scope is not None and h not in scope
                if outside and tree is not None:
                    absent.append(h)
                elif h not in live.error_hosts and not (outside and e.role == "client"):
                    world.findings.append(_missing(live_path, h, e, live.collect_failed.get(h)))
                continue
            groups.setdefault(_signature(state), []).append(h)
        stem = os.path.basename(e.path).split(".", 1)[0]
        for k, hosts in enumerate(groups.values()):  # in the order of their first member
            state = live.hosts[hosts[0]]
            # a class split in several (or standing in for the hosts left out) numbers its
            # collected groups, so a finding about a dump names it, not the plan's class
            alone = len(groups) == 1 and not absent
            name = stem if alone or e.role != "client" else f"{stem}#{k + 1}"
            file = state.sources[0] if state.sources else live_path
            world.add(Endpoint(name, e.role, nodes.fold(hosts), file, state, e.fs, len(hosts)))
            for h in hosts:
                nets = live.hosts[h].nets
                if nets is not None:
                    world.own(h, (n for ns in nets.nids.values() for n in ns), file)
        if absent and tree is not None:
            name = stem  # the plan's class: as the tree has it
            _stand_in(world, tree, e, name, absent, cache)
    for h in sorted(set(live.hosts) - known):
        world.findings.append(
            Diagnostic(
                live_path,
                0,
                0,
                "warning",
                "V-HOST-UNKNOWN",
                "$",
                f"{h} has a dump but the manifest names no such host: not checked",
            )
        )
    return world


def _read_file(world: World, tree: str, e: Entry, cache: ParseCache) -> HostState | None:
    """The state ``e``'s file of the generated ``tree`` gives; None, and a finding, when it
    cannot be read.  No link is followed out of the tree."""
    try:
        return read_dump(os.path.join(tree, e.path), cache=cache, root=tree)
    except LiveParseError as exc:
        world.findings.append(_unreadable(exc.diagnostic))
        return None


def _stand_in(
    world: World, tree: str, e: Entry, name: str, hosts: list[str], cache: ParseCache
) -> None:
    """``hosts`` of ``e`` (outside ``--hosts``, without a dump) as the tree's file for them
    says, one endpoint ``name``; an unreadable file is a finding, as in ``read_tree``."""
    full = os.path.join(tree, e.path)
    state = _read_file(world, tree, e, cache)
    if state is None:
        return
    world.add(Endpoint(name, e.role, nodes.fold(hosts), full, state, e.fs, len(hosts)))
    if state.nets is not None and e.role != "client":
        for h in hosts:
            world.own(h, (n for ns in state.nets.nids.values() for n in ns), full)


def _missing(live_path: str, host: str, entry: Entry, why: str | None) -> Diagnostic:
    """``V-HOST-MISSING`` for ``host`` of ``entry``; with the reason ``lnetgen collect``
    recorded when it could not read the host (``why``), so that the finding says what to fix
    (``ssh: ... No route to host``) rather than only that a file is missing."""
    told = f" (lnetgen collect failed: {why})" if why is not None else ""
    return Diagnostic(
        live_path,
        0,
        0,
        "error",
        "V-HOST-MISSING",
        "$",
        f"no dump of {host} ({entry.role} in {entry.path}): nothing proved for it{told}",
    )


def _ansible_nids(path: str, root: str) -> list[str]:
    """NIDs of one Ansible ``host_vars`` file (``lustre_lnet_lnetctl_networks``: per net, the
    address of each interface) of the tree ``root``; [] when it has none.  Raises
    ``ValueError`` (a symbolic link out of ``root`` is refused, not read)."""
    try:
        doc = yaml.load(read_bytes(path, root), Loader=_Loader)
    except (OSError, LiveParseError, yaml.YAMLError) as exc:
        raise ValueError(str(exc)) from None
    nets = doc.get("lustre_lnet_lnetctl_networks") if isinstance(doc, dict) else None
    out = []
    for net, nis in (nets or {}).items() if isinstance(nets, dict) else ():
        for ni in nis if isinstance(nis, list) else ():
            addr = ni.get("ip") if isinstance(ni, dict) else None
            if addr is not None:
                try:
                    out.append(str(nodes.parse_nid(f"{addr}@{net}")))
                except nodes.NodeSyntaxError as exc:
                    raise ValueError(str(exc)) from None
    return out


def index_nids(world: World, manifest: Manifest, out_dir: str | None) -> None:
    """Fill ``world.nid_owner`` for routers and servers: NIDs their dumps show, then the
    manifest's servers and routers, then every router's and server's Ansible host_vars in the
    tree (so a host_vars file that claims another host's NID is a ``V-DUP-NID``)."""
    for host, ep in sorted(world.by_host.items()):
        if ep.state.nets is not None and ep.count == 1:
            world.own(host, (n for ns in ep.state.nets.nids.values() for n in ns), ep.file)
    owned = set(world.nid_owner.values())
    for fs in manifest.filesystems.values():
        for s in fs.servers:
            world.own(s.name, s.nids, manifest.path)
    for name, nids in manifest.routers.items():
        if name not in owned:
            world.own(name, nids, manifest.path)
    if out_dir is None:
        return
    for e in manifest.entries:
        if e.format != "ansible" or e.role == "client":
            continue
        if not e.path.endswith(f"host_vars/{e.hosts}/lnet.yml"):
            continue
        full = os.path.join(out_dir, e.path)
        try:
            world.own(e.hosts, _ansible_nids(full, out_dir), full)
        except ValueError as exc:
            world.findings.append(
                Diagnostic(full, 0, 0, "warning", "V-NID-SOURCE", "$", f"not read: {exc}")
            )
