"""What a file system declares, checked against the host files: every server has a file and an
NI on each net of its NIDs, failover partners and the MGS are servers of the file system, the
mount spec names the MGS NIDs, every NID handed to clients (mount, ``--mgsnode``,
``--servicenode``) is one of the serving host's client NIDs, every node that may serve a target
or run the MGS is listed where clients and targets look for it (``failover_nids``), and each MGS
is formatted exactly once in the whole manifest (a shared MGS too: a second ``mkfs.lustre
--mgs`` would wipe the configuration logs of the file systems the first one holds)."""

from __future__ import annotations

import json
import re

from lnetgen import nodes
from lnetgen.verify.findings import Collector
from lnetgen.verify.locate import Locator
from lnetgen.verify.manifest import FileSystem, Manifest, Server, Target
from lnetgen.verify.reach import net_of
from lnetgen.verify.world import Endpoint, World

_MKFS_NIDS = re.compile(r"--(mgsnode|servicenode|failnode)[= ]\"?([^\s\"]+)")
_MKFS_MGS = re.compile(r"(?:^|\s)--mgs(?=\s|$)")
#: The failover finding (see ``DeclaredChecker.failover_nids``).
FAILOVER_NIDS = "V-FAILOVER-NIDS"


def _pieces(text: str) -> list[str]:
    """``text`` cut at ``,`` (NIDs of one host) and at ``:`` (hosts) -- a ``:`` only once the
    piece has its ``@net``, since an IPv6 NID has colons of its own
    (``fd00::1@tcp:fd00::2@tcp``)."""
    out: list[str] = []
    cur: list[str] = []
    for ch in text:
        if ch == "," or (ch == ":" and "@" in cur):
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def _split_nids(text: str) -> list[str]:
    """NIDs of an ``--mgsnode``/``--servicenode`` value or a mount spec (``:`` between hosts,
    ``,`` between NIDs of one host); a piece that is no NID is kept as written."""
    out = []
    for piece in _pieces(text):
        if not piece:
            continue
        try:
            out.append(str(nodes.parse_nid(piece)))
        except nodes.NodeSyntaxError:
            out.append(piece)
    return out


def _and_partner(partner: str | None) -> str:
    return f" and its failover partner {partner}" if partner is not None else ""


def _lacks(opt: str, named: dict[str, set[str | None]], nodes_: list[str]) -> str:
    """How a message says a target's ``opt`` options name no NID of ``nodes_``."""
    who = ", ".join(nodes_)
    if opt in named:
        return f"its --{opt} options name no NID of {who}"
    if opt == "failnode":
        return f"it has no --servicenode or --failnode option naming {who}"
    return f"it has no --{opt} option naming {who}"


class DeclaredChecker:
    """Checks one file system's declarations; reports into a ``Collector``."""

    def __init__(self, world: World, manifest: Manifest, out: Collector, loc: Locator) -> None:
        self.world, self.manifest, self.out, self.loc = world, manifest, out, loc

    def _at(self, fs: FileSystem, *needles: str) -> int:
        return self.manifest.line_of('"filesystems"', f'"{fs.name}":', *needles)

    def _report(self, code: str, fs: FileSystem, line: int, path: str, message: str) -> None:
        self.out.add(code, self.manifest.path, line, 1, f"$.filesystems.{fs.name}{path}", message)

    def _mkfs_line(self, fs: FileSystem, t: Target) -> int:
        """The line of ``t``'s ``mkfs`` value in the manifest (of its name when not found)."""
        return self._at(fs, json.dumps(t.mkfs)) or self._at(fs, f'"name": "{t.name}"')

    def servers(self, fs: FileSystem) -> list[tuple[Server, Endpoint]]:
        """The servers of ``fs`` that have a file, each checked against it."""
        found = []
        names = {s.name for s in fs.servers}
        for i, s in enumerate(fs.servers):
            ep = self.world.by_host.get(s.name)
            if ep is None or ep.role != "server":
                what = "no readable host file" if ep is None else f"a {ep.role} file"
                self._report(
                    "V-HOST-MISSING",
                    fs,
                    self._at(fs, f'"name": "{s.name}"'),
                    f".servers[{i}]",
                    f"{fs.name}: server {s.name} has {what}: nothing proved",
                )
                continue
            found.append((s, ep))
            for nid in dict.fromkeys(s.nids + s.client_nids):
                if net_of(nid) not in ep.nets:
                    place = self.loc.section(ep.file, "net")
                    self.out.add(
                        "V-NID-NO-NI",
                        ep.file,
                        place.line,
                        place.col,
                        place.path,
                        f"{s.name} has NID {nid} in the manifest but no NI on {net_of(nid)}",
                    )
            for nid in s.client_nids:
                if nid not in s.nids:
                    self._report(
                        "V-NID-NOT-CLIENT",
                        fs,
                        self._at(fs, f'"name": "{s.name}"', nid),
                        f".servers[{i}].client_nids",
                        f"{fs.name}: client NID {nid} of {s.name} is not one of its NIDs",
                    )
            if s.failover is not None and (s.failover not in names or s.failover == s.name):
                self._report(
                    "V-FAILOVER",
                    fs,
                    self._at(fs, f'"name": "{s.name}"', '"failover"'),
                    f".servers[{i}].failover",
                    f"{fs.name}: failover partner {s.failover} of {s.name} is not another server "
                    f"of {fs.name}",
                )
        return found

    def _client_nids_of(self, fs: FileSystem, name: str) -> set[str]:
        """Client NIDs of server ``name`` and of its failover partner (both ways)."""
        return {n for s in self._pair_of(fs, name) for n in s.client_nids}

    def _all_nids_of(self, fs: FileSystem, name: str) -> set[str]:
        """Every NID of server ``name`` and of its failover partner (both ways)."""
        return {n for s in self._pair_of(fs, name) for n in s.nids}

    @staticmethod
    def _pair_of(fs: FileSystem, name: str) -> list[Server]:
        """Server ``name``, the servers whose failover partner it is, and their partners."""
        out: list[Server] = []
        for s in fs.servers:
            if s.name == name or s.failover == name:
                out.append(s)
                out.extend(t for t in fs.servers if t.name == s.failover)
        return out

    def mgs(self, fs: FileSystem) -> None:
        """The MGS is a server of ``fs``; mount spec and ``mgs_nids`` agree and are client
        NIDs of the MGS or its failover partner."""
        if fs.mgs not in {s.name for s in fs.servers}:
            self._report(
                "V-MGS",
                fs,
                self._at(fs, '"mgs"'),
                ".mgs",
                f"{fs.name}: the MGS {fs.mgs} is not a server of {fs.name}",
            )
        allowed = self._client_nids_of(fs, fs.mgs)
        for nid in fs.mgs_nids:
            if nid not in allowed:
                self._report(
                    "V-NID-NOT-CLIENT",
                    fs,
                    self._at(fs, '"mgs_nids"', nid),
                    ".mgs_nids",
                    f"{fs.name}: mount NID {nid} is not a client NID of the MGS {fs.mgs} or its "
                    "failover partner: clients are handed client NIDs only",
                )
        left, sep, name = fs.mount.rpartition(":/")
        if not sep or name != fs.name or set(_split_nids(left)) != set(fs.mgs_nids):
            self._report(
                "V-MOUNT-SPEC",
                fs,
                self._at(fs, '"mount"'),
                ".mount",
                f"{fs.name}: mount spec {fs.mount!r} should name the MGS NIDs "
                f"{':'.join(fs.mgs_nids)} and :/{fs.name}",
            )

    def mkfs(self, fs: FileSystem) -> None:
        """Each ``--mgsnode`` group (the NIDs of one node) names NIDs of the MGS or its
        failover partner, one of them a mount NID; each ``--servicenode``/``--failnode`` group
        names NIDs of the target's server or its partner, one of them a client NID.  Extra
        server-net NIDs are right there: servers reach each other on them, and Lustre skips a
        peer NID it cannot reach (``ptlrpc_uuid_to_peer``).  Then ``failover_nids``."""
        for i, s in enumerate(fs.servers):
            clients = self._client_nids_of(fs, s.name)
            owned = self._all_nids_of(fs, s.name)
            mgs_owned = self._all_nids_of(fs, fs.mgs)
            for t in s.targets:
                for m in _MKFS_NIDS.finditer(t.mkfs):
                    opt = m.group(1)
                    group = _split_nids(m.group(2))
                    mgs = opt == "mgsnode"
                    known, usable = (mgs_owned, set(fs.mgs_nids)) if mgs else (owned, clients)
                    strangers = [n for n in group if n not in known]
                    if not strangers and usable & set(group):
                        continue
                    line = self._at(fs, f'"name": "{t.name}"')
                    where = f".servers[{i}].targets"
                    whose = f"the MGS {fs.mgs}" if mgs else s.name
                    why = (
                        f"{', '.join(strangers)} is no NID of {whose} or its failover partner"
                        if strangers
                        else "none of them is a NID clients may use"
                    )
                    self._report(
                        "V-MGS" if mgs else "V-NID-NOT-CLIENT",
                        fs,
                        line,
                        where,
                        f"{fs.name}: {t.name} --{opt}={m.group(2)}: {why}",
                    )
        self.failover_nids(fs)

    def failover_nids(self, fs: FileSystem) -> None:
        """Every node that may serve a target is named where the others look for it
        (``V-FAILOVER-NIDS``, at the target's ``mkfs`` line or at ``mgs_nids``).

        What an administrator expects, as Lustre uses these lists: clients and the MGS learn
        a target's servers only from ``mkfs.lustre --servicenode`` (``--failnode``: the
        failover nodes, the formatting node implied), so a target whose server has a
        ``failover`` partner must list both -- with ``--servicenode`` every server, the
        primary too -- or clients never find it once the partner has taken it over.  A target
        registers with the MGS only at the NIDs of its ``--mgsnode`` options, and clients mount
        only from the mount NIDs: both must name the MGS and the MGS's failover partner, or
        no target registers, nor any client mounts, while the partner runs the MGS.  A node is
        named when one of its NIDs (the manifest's ``nids`` or ``client_nids``) is; what the
        NIDs themselves must be is ``mkfs``'s and ``mgs``'s check."""
        names = {s.name: s for s in fs.servers}
        owner = {n: s.name for s in fs.servers for n in s.nids + s.client_nids}

        def partner(name: str) -> str | None:
            s = names.get(name)
            f = s.failover if s is not None else None
            return f if f is not None and f in names and f != name else None

        mgs_nodes = [n for n in (fs.mgs if fs.mgs in names else None, partner(fs.mgs)) if n]
        mounted = {owner.get(n) for n in fs.mgs_nids}
        missing = [n for n in mgs_nodes if n not in mounted]
        if missing:
            self._report(
                FAILOVER_NIDS,
                fs,
                self._at(fs, '"mgs_nids"'),
                ".mgs_nids",
                f"{fs.name}: the mount NIDs name no NID of {', '.join(missing)} (the MGS "
                f"{fs.mgs}{_and_partner(partner(fs.mgs))}): clients cannot mount while "
                f"{' or '.join(missing)} runs the MGS",
            )
        for i, s in enumerate(fs.servers):
            mine = partner(s.name)
            for j, t in enumerate(s.targets):
                named: dict[str, set[str | None]] = {}
                for m in _MKFS_NIDS.finditer(t.mkfs):
                    found = named.setdefault(m.group(1), set())
                    found.update(owner.get(n) for n in _split_nids(m.group(2)))
                where = f".servers[{i}].targets[{j}].mkfs"
                if "servicenode" in named:
                    opt, need = "servicenode", [s.name, mine]
                else:
                    opt, need = "failnode", [mine]
                gone = [n for n in need if n is not None and n not in named.get(opt, ())]
                if gone:
                    self._report(
                        FAILOVER_NIDS,
                        fs,
                        self._mkfs_line(fs, t),
                        where,
                        f"{fs.name}: {t.name} is served by {s.name}{_and_partner(mine)}, but "
                        f"{_lacks(opt, named, gone)}: clients and the MGS never learn that "
                        f"{' or '.join(gone)} serves it",
                    )
                if _MKFS_MGS.search(t.mkfs):
                    continue  # the MGS's own target: it registers with itself
                gone = [n for n in mgs_nodes if n not in named.get("mgsnode", ())]
                if gone:
                    self._report(
                        FAILOVER_NIDS,
                        fs,
                        self._mkfs_line(fs, t),
                        where,
                        f"{fs.name}: {t.name} registers with the MGS {fs.mgs}"
                        f"{_and_partner(partner(fs.mgs))}, but {_lacks('mgsnode', named, gone)}: "
                        f"it cannot register while {' or '.join(gone)} runs the MGS",
                    )

    def mgs_formatted_once(self) -> None:
        """Every MGS has exactly one ``mkfs.lustre --mgs`` line in the whole manifest: none
        leaves its file systems with no configuration logs to register with, a second one --
        a shared MGS formatted again for the next file system -- makes a new, empty MGT over
        the logs of the file systems already on it.  Runs once, not per file system."""
        formats: dict[str, list[tuple[FileSystem, int, str]]] = {}
        for fs in self.manifest.filesystems.values():
            for i, s in enumerate(fs.servers):
                for t in s.targets:
                    if _MKFS_MGS.search(t.mkfs):
                        formats.setdefault(s.name, []).append((fs, i, t.name))
        for name, found in formats.items():
            # the format kept is the one under the MGS server's own file system (where it has
            # targets besides the MGS), the others are the extra ones
            found.sort(key=lambda f: len(f[0].servers[f[1]].targets) < 2)
            first = found[0][0].name
            for fs, i, target in found[1:]:
                self._report(
                    "V-MGS",
                    fs,
                    self._at(fs, f'"name": "{target}"'),
                    f".servers[{i}].targets",
                    f"{fs.name}: target {target} of {name} formats its MGS again (mkfs.lustre "
                    f"--mgs, also under {first}): a second format wipes the configuration logs "
                    "the first holds; format a shared MGS once",
                )
        for fs in self.manifest.filesystems.values():
            if fs.mgs not in formats and fs.mgs in {s.name for s in fs.servers}:
                self._report(
                    "V-MGS",
                    fs,
                    self._at(fs, '"mgs"'),
                    ".mgs",
                    f"{fs.name}: no target formats the MGS {fs.mgs} (no mkfs.lustre --mgs for "
                    "it under any file system)",
                )
