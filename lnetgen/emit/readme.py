"""``README.txt`` at the top of an output tree: which file goes on which host, in what order to
deploy, and the ``mkfs.lustre`` / ``mount`` commands of every file system.

It is written for every ``generate`` (whatever ``--formats``), from the files actually emitted,
so it names only files that exist.  Like every emitted text file it starts with the header line
and is listed in ``manifest.json``.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from collections.abc import Sequence

from lnetgen import nodes
from lnetgen.emit.base import FileRecord, OutFile, header
from lnetgen.emit.lustre import FsDeploy
from lnetgen.plan import Plan
from lnetgen.target import KERNEL_ROUTES_REMOVED, NO_TARGETS, ROLES, Targets, show

PATH = "README.txt"
FORMAT = "readme"

#: The formats that configure a host, and where their files go.
_WHERE = {
    "lnetctl": "/etc/lnet.conf (lnetctl import; lnet.service loads it at boot)",
    "modprobe": "/etc/modprobe.d/lnet.conf (module options; Lustre before 2.19.53 only)",
    "ansible": "an Ansible inventory that writes the same settings (docs/ansible.md)",
}
#: Files that go with a format's (``udsp/``: with ``lnetctl/``), and where they go.
_WITH = {"udsp": "/etc/lnet-udsp.sh with the class's lnetctl/ file (see LOADING)"}


def readme(
    plan: Plan,
    files: Sequence[FileRecord],
    fss: list[FsDeploy],
    server_nets: dict[str, str],
    lustre: Targets = NO_TARGETS,
) -> OutFile:
    out = [f"# {header(plan)}", ""]
    out += [
        f"What to deploy where: site {plan.site}, routing layout {plan.strategy}.",
        "Paths are relative to this directory; manifest.json lists every file with its hosts.",
        "",
    ]
    out += _server_net(server_nets)
    out += _loading(lustre, any(f.format == "modprobe" for f in files), _need_lnetctl(plan))
    out += _udsp(any(f.format == "udsp" for f in files))
    out += _hosts(plan, files)
    out += _order(bool(fss), bool(server_nets))
    for f in fss:
        also = tuple(g.name for g in fss if g.mgs == f.mgs and g.name != f.name)
        out += _filesystem(f, also if f.mgt_in == f.name else ())
    text = "\n".join(out).rstrip("\n") + "\n"
    return OutFile(PATH, text, FORMAT, "", "site")


def _need_lnetctl(plan: Plan) -> dict[str, str]:
    """Role -> what its hosts lose when LNet comes up from a modprobe file without
    ``routes=``/``forwarding=`` (the module of 2.19.53 and later parses neither): a client
    or server with routes its routes, every router its forwarding.  A role absent here (no
    hosts, or no routes in the plan: clients on a storage net) loses nothing."""
    out = {}
    if any(cc.routes for cc in plan.client_classes):
        out["client"] = "a client has no routes and cannot mount"
    if plan.routers:
        out["router"] = "a router does not forward"
    if any(sr.routes for sr in plan.server_routes):
        out["server"] = "a server has no routes to its clients"
    return out


def _para(text: str) -> list[str]:
    return textwrap.wrap(text, 88, initial_indent="  ", subsequent_indent="  ")


def _names(roles: Sequence[str]) -> str:
    names = [r + "s" for r in roles]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _loading(lustre: Targets, modprobe: bool, need: dict[str, str]) -> list[str]:
    """How LNet takes the files on the target release, and how a change is made live.

    Which hosts a modprobe file alone configures is said for exactly those hosts: a role on
    2.19.53 or later whose hosts need routes (or, routers, forwarding) gets no routes from its
    modprobe file (the module no longer parses them), so it must load its lnetctl file
    (lnet.service, or ``lnetctl import``) before it mounts; the other roles may bring LNet up
    from the modprobe file alone.  With the release unknown the sentence says which releases
    it holds for."""
    out = [
        "LOADING",
        f"  Lustre release: {lustre.describe()}.",
        "  lnet.service (systemctl enable --now lnet) runs: modprobe lnet; lnetctl lnet",
        "  configure; lnetctl import /etc/lnet.conf.  Install the lnetctl/ file there.",
        "  'lnetctl lnet configure' (without --all) ignores the networks=, routes= and",
        "  forwarding= module options, so on such a host /etc/lnet.conf is the whole LNet",
        "  configuration and a modprobe file only sets the tunables read at module load.",
    ]
    modern = [r for r in ROLES if not lustre.kernel_routes(r)]
    concerned = [r for r in modern if r in need]
    if modern:
        out += _para(
            f"{_names(modern).capitalize()} run Lustre {show(KERNEL_ROUTES_REMOVED)} or later, "
            "which no longer parses routes= or forwarding=: their routes and routing come from "
            "lnetctl/ only (their modprobe files, if written, carry networks= and tunables)."
        )
    if concerned:
        out += _para(
            f"{_names(concerned).capitalize()} must therefore bring LNet up with lnet.service "
            "(or 'modprobe lnet; lnetctl lnet configure; lnetctl import /etc/lnet.conf') before "
            "any Lustre mount: with LNet brought up from the modprobe file alone (by a mount or "
            "'lctl network up'), " + "; ".join(need[r] for r in concerned) + "."
        )
    alone = [r for r in ROLES if r not in concerned]
    if modprobe and alone:
        if not lustre.known:
            out += _para(
                "Hosts on Lustre before "
                f"{show(KERNEL_ROUTES_REMOVED)} that bring LNet up without lnet.service (a "
                "Lustre mount, lctl network up) are configured by their modprobe file alone: "
                "install one format per host.  From "
                f"{show(KERNEL_ROUTES_REMOVED)} on the module ignores routes= and forwarding=, "
                "so such a host needs its lnetctl/ file loaded (lnet.service) before it mounts."
            )
        else:
            who = "Hosts" if len(alone) == len(ROLES) else _names(alone).capitalize()
            out += _para(
                f"{who} that bring LNet up without lnet.service (a Lustre mount, lctl network "
                "up) are configured by their modprobe file alone: install one format per host."
            )
    out += [
        "  Routes, nets and tunables change live: 'lnetctl import FILE' adds what FILE",
        "  holds, 'lnetctl import --del FILE' removes it.  Add new routes before removing",
        "  old ones.  A router with routing off ('lnetctl set routing 0') drops what it is",
        "  given to forward at once: drain one only while every net it serves has another",
        "  gateway; 'lnetgen diff --plan-changes' lists the steps in a safe order.  A server",
        "  NID change (a new address, or a storage net it leaves) is not live: the file",
        "  system's configuration logs hold it (stop the file system, then 'lctl",
        "  replace_nids' on the MGS, or a writeconf).",
        "",
    ]
    return out


def _udsp(present: bool) -> list[str]:
    """How the UDSP router rules of ``udsp/`` are loaded (nothing when there are none)."""
    if not present:
        return []
    return [
        "UDSP ROUTER RULES",
        *_para(
            "A client class with a udsp/ file prefers its best-priority routers by UDSP rules "
            "that lnetctl import cannot carry (it would give them a priority action, and the "
            "kernel never applies a router rule with one). Install the file as "
            "/etc/lnet-udsp.sh and run it after the import on every LNet start: 'sh "
            "/etc/lnet-udsp.sh' by hand, and for every boot a drop-in "
            "/etc/systemd/system/lnet.service.d/lnetgen-udsp.conf holding '[Service]' and "
            "'ExecStartPost=/bin/sh /etc/lnet-udsp.sh' (then 'systemctl daemon-reload'). It "
            "deletes every UDSP rule before it adds its own, so it may run again. Without the "
            "rules the route priorities alone choose the same routers."
        ),
        "",
    ]


def _server_net(server_nets: dict[str, str]) -> list[str]:
    if not server_nets:
        return [
            "SERVER NET",
            "  None needed: the servers of each storage fabric share one storage net.",
            "",
        ]
    out = ["SERVER NET"]
    for fabric, net in server_nets.items():
        out.append(f"  {net} on storage fabric {fabric}")
    out += [
        "  Every OSS, MDS and MGS of the fabric joins it with the interface and IP of its storage",
        "  NID, so servers reach each other directly.  Routers and clients never get an interface",
        "  or a route on it, and the client mount commands below name storage-net NIDs only.",
        "",
    ]
    return out


def _hosts(plan: Plan, files: Sequence[FileRecord]) -> list[str]:
    per_role: dict[str, list[FileRecord]] = defaultdict(list)
    for f in files:
        per_role[f.role if f.format in _WHERE or f.format in _WITH else "site"].append(f)
    formats = sorted({f.format for f in files if f.format in _WHERE})
    out = ["1. FILES PER HOST", "  Install one LNet format per host (the same on every host):"]
    for fmt in formats:
        out.append(f"    {fmt + '/':<10} -> {_WHERE[fmt]}")
    for fmt in sorted({f.format for f in files if f.format in _WITH}):
        out.append(f"    {fmt + '/':<10} -> {_WITH[fmt]}")
    out.append("")
    for role, what in (("router", "LNet routers"), ("server", "servers (OSS, MDS, MGS)")):
        hosts = nodes.fold(r.name for r in plan.routers) if role == "router" else ""
        if role == "server":
            hosts = nodes.fold(s.name for s in plan.servers)
        count = len(plan.routers) if role == "router" else len(plan.servers)
        pattern = sorted(
            {
                _pattern(f.path, f.hosts, role)
                for f in per_role[role]
                if f.hosts and "," not in f.hosts and "[" not in f.hosts
            }
        )
        out.append(f"  {what} ({count}): {hosts}")
        out += [f"    {p}" for p in pattern]
    classes = {c.members: c for c in plan.client_classes}
    by_members: dict[str, list[str]] = defaultdict(list)
    for f in per_role["client"]:
        if f.hosts in classes:
            by_members[f.hosts].append(f.path)
    out.append(f"  client classes ({len(plan.client_classes)}, hosts with the same route table):")
    for c in plan.client_classes:
        paths = sorted(by_members.get(c.members, []))
        out.append(f"    {c.name} ({c.count} on {c.net}, {c.interface}): {c.members}")
        out += [f"      {p}" for p in paths]
    site_files = sorted(f.path for f in per_role["site"] if f.path != PATH)
    out.append("  site-wide (review, the Ansible control node, the subnet manager for opensm/):")
    out += [f"    {p}" for p in [*site_files, "manifest.json"]]
    out.append("")
    return out


def _pattern(path: str, host: str, role: str) -> str:
    placeholder = f"<{role}>"
    return path.replace(host, placeholder) if host in path else path


def _order(has_fs: bool, has_server_net: bool) -> list[str]:
    out = [
        "2. ORDER",
        "  1. Routers: install their file and start LNet (lnetctl lnet configure; lnetctl import",
        "     /etc/lnet.conf); they forward before anyone routes through them.",
        "  2. Servers: install their file and start LNet; every server reaches every router of",
        "     its storage net"
        + (" and every other server on the server net." if has_server_net else "."),
    ]
    if has_fs:
        out += [
            "  3. First installation only: format the targets (section 3, on the host named).",
            "     Mount in this order: the MGS target, the MDTs (MDT0000 first), then the OSTs:",
            "     mount -t lustre /dev/mapper/<target> /lustre/<target>",
            "  4. Clients: install the class file, start LNet, then mount each file system.",
        ]
    else:
        out.append("  3. Clients: install the class file and start LNet.")
    out += [
        "  Check: lnetctl ping from a client to a server NID of each storage net.",
        "",
    ]
    return out


def _filesystem(f: FsDeploy, also: tuple[str, ...] = ()) -> list[str]:
    """One file system's mount command and, per server, what to format on it.  A shared MGS
    (one that ``f`` uses but another file system's section formats) is named with where its
    target is formatted, and nothing is formatted for it here: a second ``mkfs.lustre --mgs``
    on its device would wipe the configuration logs of the file systems already on it.  The
    section that formats it names the other file systems it serves (``also``), so that whoever
    reformats it knows which file systems lose their logs."""
    shared = f.mgt_in not in ("", f.name)
    mgs = f"{f.mgs} (shared with {f.mgt_in}, whose section formats it)" if shared else f.mgs
    if also:
        mgs = f"{f.mgs} (also the MGS of {', '.join(also)})"
    out = [
        f"3. FILE SYSTEM {f.name}",
        f"  MGS: {mgs}; clients mount from {', '.join(f.mgs_nids)}:",
        f"    mount -t lustre {f.mount} /mnt/{f.name}",
        "  Format (first installation only; devices are /dev/mapper/<target>, replace them):",
    ]
    for s in f.servers:
        role = s.role.upper() + (" + MGS" if s.mgs else "")
        partner = f", failover partner {s.failover}" if s.failover else ""
        out.append(f"    on {s.name} ({role}, NIDs {', '.join(s.nids)}{partner}):")
        if s.targets:
            out += [f"      {t.mkfs}" for t in s.targets]
        elif s.mgs and shared:
            out += [
                f"      nothing for {f.name}: the shared MGS target is formatted once, under FILE",
                f"      SYSTEM {f.mgt_in} (a second mkfs.lustre --mgs would wipe its logs)",
            ]
        elif s.fs and s.fs != f.name:
            out.append(f"      nothing for {f.name} (a server of {s.fs}; MGS failover partner)")
        else:
            out.append("      (no target of its own)")
    out.append("")
    return out
