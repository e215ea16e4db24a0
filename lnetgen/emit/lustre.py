"""What a file system needs to be formatted and mounted, from the plan and the site: per file
system its MGS and the MGS NIDs clients mount from, each server's NIDs (all, and the ones clients
may use) and failover partner, and each target's ``mkfs.lustre`` command.

NIDs: a server's storage-net NID is the one clients route to; its server-net NID (when its
fabric has a server net) only servers use.  ``mkfs.lustre`` therefore lists *every* NID of the
MGS (``--mgsnode``) and of a target's servers (``--servicenode``): a server picks the one it
reaches (the server net), a client the one it routes to (the storage net) -- Lustre takes, of a
peer's NIDs, the nearest reachable one and skips unreachable ones (``ptlrpc_uuid_to_peer``).
The client mount spec lists only storage-net NIDs.  A Multi-Rail server's rails are NIDs of the
same node, listed after its first port (``a,b`` is one node, ``:`` separates failover nodes),
so a client or server still finds it when the first port is down.  Devices are named
``/dev/mapper/<target>`` (a multipath alias per target); replace them with the real devices.

A shared MGS (``filesystems[].mgs`` naming a server of another file system) has one MGS target
(MGT) holding the configuration logs of every file system that uses it, so it is formatted
once: ``mkfs.lustre --mgs`` appears in the section of one file system only -- the MGS server's
own file system when that one uses it, else the first (inventory order) that does -- and a
second ``mkfs.lustre --mgs`` on that device would wipe the logs the first one wrote.  Every
other file system lists the MGS and its failover partner among its servers (its targets
register with them and its clients mount from them, so ``verify`` proves both are reached),
with no target of theirs, and its targets name both in ``--mgsnode``.
"""

from __future__ import annotations

from dataclasses import dataclass

from lnetgen import nodes
from lnetgen.model import Server, Site
from lnetgen.plan import Plan, ServerPlan

#: Where ``mkfs.lustre`` commands expect each target's block device.
DEVICE_DIR = "/dev/mapper"
MGT = "MGS"  # the MGS target's name (one per MGS server, shared by its file systems)


@dataclass(frozen=True)
class Target:
    name: str  # e.g. scratch-OST000a, scratch-MDT0000, MGS
    index: int
    kind: str  # ost | mdt | mgt
    mkfs: str

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "index": self.index, "kind": self.kind, "mkfs": self.mkfs}


@dataclass(frozen=True)
class ServerDeploy:
    name: str
    role: str  # oss | mds
    mgs: bool
    nids: tuple[str, ...]  # every NID (rails included), storage net first
    client_nids: tuple[str, ...]  # its storage-net NIDs
    failover: str | None
    targets: tuple[Target, ...]
    #: the file system the server belongs to (README only; not in the manifest)
    fs: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "role": self.role,
            "mgs": self.mgs,
            "nids": list(self.nids),
            "client_nids": list(self.client_nids),
            "failover": self.failover,
            "targets": [t.as_dict() for t in self.targets],
        }


@dataclass(frozen=True)
class FsDeploy:
    name: str
    mgs: str
    mgs_nids: tuple[str, ...]  # client-reachable, primary first, then its failover partner
    mount: str
    servers: tuple[ServerDeploy, ...]
    #: the file system whose section formats the (shared) MGS target; this one's own name when
    #: it does (README only; not in the manifest)
    mgt_in: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "mgs": self.mgs,
            "mgs_nids": list(self.mgs_nids),
            "mount": self.mount,
            "servers": [s.as_dict() for s in self.servers],
        }


def target_name(fs: str, kind: str, index: int) -> str:
    """Lustre's target name: ``<fsname>-OST<index as 4 hex digits>`` (``-MDT`` likewise)."""
    return f"{fs}-{kind.upper()}{index:04x}"


def filesystems(site: Site, plan: Plan) -> list[FsDeploy]:
    """Every file system that has servers, in inventory order.  Its servers: its own, then the
    MGS and the MGS's failover partner when they serve another file system (a shared MGS,
    whose target only the file system of :func:`mgt_owners` formats)."""
    planned = {s.name: s for s in plan.servers}
    owners = mgt_owners(site)
    out = []
    for f in site.filesystems:
        members = [s for s in site.servers if s.fs == f.name]
        if not members or not f.mgs:
            continue
        mgs = site.server(f.mgs)
        mgs_pair = [mgs, *([site.server(mgs.failover)] if mgs.failover else [])]
        mgs_all = _nodes(planned, [s.name for s in mgs_pair])
        mgs_client = tuple(nid for s in mgs_pair for nid in planned[s.name].client_nids)
        mgsnode = " ".join(f"--mgsnode={','.join(nids)}" for nids in mgs_all)
        servers = []
        hosts = members + [s for s in mgs_pair if s not in members]
        for s in sorted(hosts, key=lambda s: (s is not mgs, s.role != "mds", s.name)):
            p = planned[s.name]
            service = " ".join(
                f"--servicenode={','.join(nids)}" for nids in _nodes(planned, [s.name, s.failover])
            )
            targets = []
            if s is mgs and owners[mgs.name] == f.name:
                targets.append(Target(MGT, 0, "mgt", _mkfs("--mgs", service, MGT)))
            if s.fs == f.name:
                targets += _targets(f.name, s, mgsnode, service)
            servers.append(
                ServerDeploy(
                    s.name,
                    s.role,
                    s is mgs,
                    p.all_nids,
                    p.client_nids,
                    s.failover or None,
                    tuple(targets),
                    s.fs,
                )
            )
        mount = ":".join(",".join(planned[s.name].client_nids) for s in mgs_pair) + f":/{f.name}"
        out.append(FsDeploy(f.name, mgs.name, mgs_client, mount, tuple(servers), owners[mgs.name]))
    return out


def mgt_owners(site: Site) -> dict[str, str]:
    """MGS server -> the one file system whose section formats its MGS target: the server's own
    file system when that one uses it as MGS, else the first file system (inventory order)
    that does.  Formatting it once per file system would wipe the configuration logs of the
    others (``mkfs.lustre --mgs`` makes a new, empty MGT)."""
    users: dict[str, list[str]] = {}
    for f in site.filesystems:
        if f.mgs and any(s.fs == f.name for s in site.servers):
            users.setdefault(f.mgs, []).append(f.name)
    out = {}
    for mgs, fss in users.items():
        own = site.server(mgs).fs
        out[mgs] = own if own in fss else fss[0]
    return out


def _targets(fs: str, s: Server, mgsnode: str, service: str) -> list[Target]:
    out = []
    for kind, indices in (("mdt", s.mdts), ("ost", s.osts)):
        for i in indices:
            name = target_name(fs, kind, i)
            opts = f"--{kind} --fsname={fs} --index={i} {mgsnode}"
            out.append(Target(name, i, kind, _mkfs(opts, service, name)))
    return out


def _mkfs(options: str, service: str, target: str) -> str:
    return f"mkfs.lustre {options} {service} {DEVICE_DIR}/{target}"


def _nodes(planned: dict[str, ServerPlan], names: list[str]) -> list[tuple[str, ...]]:
    """Per named server (empty names skipped): all its NIDs, Multi-Rail ports included."""
    return [planned[n].all_nids for n in names if n]


def server_nets(site: Site, plan: Plan) -> dict[str, str]:
    """Storage fabric -> the server net its servers share ({} when the layout needs none)."""
    fabric_of = {s.name: s.fabric for s in site.servers}
    out: dict[str, str] = {}
    for s in plan.servers:
        if s.server_net:
            out[fabric_of[s.name]] = s.server_net
    return dict(sorted(out.items()))


def host_filesystems(site: Site, plan: Plan) -> dict[str, tuple[str, ...]]:
    """Router or server -> the file systems it serves (a router: those of the storage nets it
    has an interface on; a server: its own and those it is the MGS, or MGS partner, of)."""
    fs_names = [f.name for f in site.filesystems if any(s.fs == f.name for s in site.servers)]
    server_fs = {s.name: s.fs for s in site.servers}
    net_fs: dict[str, set[str]] = {}
    for n in plan.storage_nets():
        net_fs[n.name] = {server_fs[s] for s in n.servers}
    out: dict[str, set[str]] = {s.name: {s.fs} for s in site.servers}
    for f in site.filesystems:
        if f.mgs:
            for name in (f.mgs, site.server(f.mgs).failover):
                if name:
                    out[name].add(f.name)
    for r in plan.routers:
        out[r.name] = set().union(*(net_fs.get(i.net, set()) for i in r.interfaces))
    order = {name: k for k, name in enumerate(fs_names)}
    return {h: tuple(sorted(v, key=lambda x: order.get(x, len(order)))) for h, v in out.items()}


def file_filesystems(
    role: str, hosts: str, all_fs: tuple[str, ...], per_host: dict[str, tuple[str, ...]]
) -> list[str]:
    """The file systems an emitted file is for: a client's (or a site-wide file's) all of them;
    a router's or server's file those of its hosts."""
    if role in ("client", "site") or not hosts:
        return list(all_fs)
    got = {fs for h in nodes.expand(hosts) for fs in per_host.get(h, ())}
    return [fs for fs in all_fs if fs in got]
