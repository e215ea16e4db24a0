"""Site inventory: YAML with source marks -> JSON Schema -> meaning checks -> ``model.Site``.

``check(path)`` returns every diagnostic (schema and meaning, errors and warnings) plus the
``Site`` when there are no errors.  Each diagnostic points at a file, line, column and JSON path.
"""

from __future__ import annotations

import csv
import hashlib
import math
import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

import jsonschema
import numpy as np

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic, InputError, errors
from lnetgen.model import (
    Attachment,
    ClientNet,
    Clients,
    Fabric,
    FileSystem,
    GroupParams,
    Leaf,
    Router,
    Server,
    Site,
    StrategyParams,
    Switch,
    Torus,
)
from lnetgen.resources import schema
from lnetgen.yamlsrc import Path, Source, load_file, read_text

SITE_SCHEMA = "site.schema.json"

# Which schema pattern stands for which kind of value, to turn "does not match '^…$'" into a
# message an administrator understands.
_PATTERN_KINDS = {
    "^[A-Za-z0-9][A-Za-z0-9-]{0,62}$": (
        "E-NAME",
        "is not safe as a host name (letters, digits and '-', at most 63, no quotes, "
        "';', spaces, '/' or newlines)",
    ),
    "^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$": (
        "E-NAME",
        "is not safe as a name or file name (letters, digits, '_', '.', '-'; no quotes, "
        "';', spaces, '/' or newlines)",
    ),
    "^[A-Za-z][A-Za-z0-9_.:-]{0,14}$": ("E-IFACE", "is not a Linux interface name"),
    "^0x[0-9a-fA-F]{16}$": (
        "E-GUID",
        "is not a 64-bit GUID written as 0x followed by 16 hex digits "
        "(OpenSM reads an unprefixed GUID as octal)",
    ),
    "^[0-9.]+@[a-z][a-z0-9]*$": ("E-NID", "is not a NID (address@net, e.g. 27@gni)"),
    "^[a-z][a-z0-9]*$": ("E-NET", "is not an LNet network name (e.g. o2ib1, gni)"),
}


def _scalar_hint(src: Source, path: Path, instance: object) -> str:
    raw = src.raw.get(path)
    if raw is None or raw[1]:  # quoted scalars were not coerced
        return ""
    text = raw[0]
    if isinstance(instance, bool):
        return f"YAML 1.1 reads unquoted {text!r} as a boolean; quote it: \"{text}\""
    if isinstance(instance, int | float) and str(instance) != text:
        return f"YAML reads unquoted {text!r} as the number {instance!r}; quote it: \"{text}\""
    if isinstance(instance, int | float):
        return f"quote it if it is meant as text: \"{text}\""
    return ""


def _schema_diags(src: Source) -> list[Diagnostic]:
    validator = jsonschema.Draft202012Validator(schema(SITE_SCHEMA))
    out: list[Diagnostic] = []
    for err in validator.iter_errors(src.data):
        if err.validator in ("oneOf", "anyOf") and err.context:
            # report the most relevant branch instead of one vague "not valid under any"
            err = jsonschema.exceptions.best_match(err.context)
        path = tuple(err.absolute_path)
        code, message = "E-SCHEMA", err.message
        hint = ""
        if err.validator == "pattern":
            kind = _PATTERN_KINDS.get(str(err.validator_value))
            if kind:
                code, what = kind
                message = f"{err.instance!r} {what}"
        elif err.validator == "type":
            hint = _scalar_hint(src, path, err.instance)
        elif err.validator == "additionalProperties":
            code = "E-SCHEMA-KEY"
        elif err.validator == "required":
            code = "E-SCHEMA-REQUIRED"
        out.append(src.diag(path, code, message, hint=hint))
    return out


class _Checker:
    """Meaning checks on schema-valid data; builds the model as it goes."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.d: dict[str, Any] = src.data
        self.diags: list[Diagnostic] = []
        self.digest = hashlib.sha256()

    def err(self, path: Path, code: str, msg: str, hint: str = "") -> None:
        self.diags.append(self.src.diag(path, code, msg, hint=hint))

    def warn(self, path: Path, code: str, msg: str, hint: str = "") -> None:
        self.diags.append(self.src.diag(path, code, msg, severity="warning", hint=hint))

    def line(self, path: Path) -> int:
        return self.src.where(path)[0]

    # -------------------------------------------------------------- nets
    def net(self, text: str, path: Path) -> nodes.Net | None:
        try:
            return nodes.parse_net(text)
        except nodes.NodeSyntaxError as exc:
            lnd = text.rstrip("0123456789")
            code = "E-NET-LND" if lnd not in nodes.LNDS else "E-NET-RANGE"
            hint = "Lustre 2.7+ dropped this LND" if lnd in nodes.REMOVED_LNDS else ""
            self.err(path, code, str(exc), hint)
            return None

    # -------------------------------------------------------------- fabrics
    def fabrics(self) -> tuple[Fabric, ...]:
        out = []
        seen: dict[str, Path] = {}
        for fi, f in enumerate(self.d["fabrics"]):
            switches = []
            for si, s in enumerate(f["switches"]):
                p: Path = ("fabrics", fi, "switches", si)
                if s["name"] in seen:
                    self.err((*p, "name"), "E-DUP-NAME",
                             f"switch {s['name']!r} is defined twice (first at line "
                             f"{self.line(seen[s['name']])})")
                seen[s["name"]] = (*p, "name")
                leaves: list[Leaf] = []
                if s["kind"] == "tor":
                    if "leaves" in s:
                        self.err((*p, "leaves"), "E-SWITCH",
                                 "a top-of-rack switch has no leaf modules; give 'ports' instead")
                    if "ports" not in s:
                        self.err(p, "E-SWITCH", "a top-of-rack switch needs 'ports'")
                    leaves = [Leaf("", s.get("ports", 0), s.get("uplinks", 0))]
                else:
                    spec = s.get("leaves")
                    if spec is None:
                        self.err(p, "E-SWITCH", "a director switch needs 'leaves'")
                    elif isinstance(spec, dict):
                        width = max(2, len(str(spec["count"])))
                        prefix = spec.get("prefix", "L")
                        leaves = [Leaf(f"{prefix}{i:0{width}d}", spec["ports"],
                                       spec.get("uplinks", spec["ports"]))
                                  for i in range(1, spec["count"] + 1)]
                    else:
                        names: set[str] = set()
                        for li, lf in enumerate(spec):
                            if lf["name"] in names:
                                self.err((*p, "leaves", li, "name"), "E-DUP-NAME",
                                         f"leaf {lf['name']!r} appears twice on {s['name']}")
                            names.add(lf["name"])
                            leaves.append(Leaf(lf["name"], lf["ports"],
                                               lf.get("uplinks", lf["ports"]), lf.get("guid", "")))
                switches.append(Switch(s["name"], s["kind"], f["name"], tuple(leaves),
                                       s.get("spines", 0), s.get("guid", ""),
                                       tuple(s.get("spine_guids", ()))))
            out.append(Fabric(f["name"], f["role"], tuple(switches)))
        return tuple(out)

    # -------------------------------------------------------------- attachments
    def attach(self, spec: dict[str, Any], path: Path, role: str | None,
               who: str) -> Attachment | None:
        sw = self.switches.get(spec["switch"])
        if sw is None:
            self.err((*path, "switch"), "E-ATTACH-SWITCH",
                     f"{who} is attached to switch {spec['switch']!r}, which is not defined")
            return None
        fabric_role = self.fabric_roles[sw.fabric]
        if role is not None and fabric_role != role:
            self.err((*path, "switch"), "E-ATTACH-FABRIC",
                     f"{who} must be on a {role} fabric, but {sw.name} is on "
                     f"{fabric_role} fabric {sw.fabric!r}")
        leaf_name = spec.get("leaf", "")
        if sw.kind == "tor" and leaf_name:
            self.err((*path, "leaf"), "E-ATTACH-LEAF",
                     f"{sw.name} is a top-of-rack switch; drop 'leaf'")
            return None
        leaf = sw.leaf(leaf_name)
        if leaf is None:
            what = "needs a 'leaf'" if not leaf_name else f"has no leaf module {leaf_name!r}"
            self.err((*path, "leaf") if leaf_name else path, "E-ATTACH-LEAF",
                     f"switch {sw.name} {what} (attachment of {who})")
            return None
        port = spec["port"]
        if port > leaf.ports:
            self.err((*path, "port"), "E-ATTACH-PORT",
                     f"port {port} does not exist: {sw.name}"
                     f"{'/' + leaf_name if leaf_name else ''} has {leaf.ports} external ports")
            return None
        a = Attachment(sw.name, leaf_name, port)
        prev = self.ports.get(a)
        if prev is not None:
            self.err((*path, "port"), "E-PORT-TAKEN",
                     f"port {a.label()}:{port} is already taken by {prev[0]} (line {prev[1]})")
        else:
            self.ports[a] = (who, self.line(path))
        return a

    # -------------------------------------------------------------- main
    def run(self) -> Site | None:
        d = self.d
        self.fabric_list = self.fabrics()
        self.switches = {s.name: s for f in self.fabric_list for s in f.switches}
        self.fabric_roles = {f.name: f.role for f in self.fabric_list}
        self.ports: dict[Attachment, tuple[str, int]] = {}

        # ---- identity registries (name, nid, ip, guid) -> first path
        names: dict[str, Path] = {}
        ips: dict[str, Path] = {}
        guids: dict[str, Path] = {}
        nid_owner: dict[str, tuple[str, Path]] = {}

        def claim(reg: dict[str, Path], key: str, path: Path, code: str, what: str,
                  owner: str) -> None:
            if key in reg:
                first = reg[key]
                self.err(path, code, f"{what} {key} of {owner} is already used at "
                                     f"{_jp(first)} (line {self.line(first)})")
            else:
                reg[key] = path

        # ---- file systems
        fss: list[FileSystem] = []
        for i, fs in enumerate(d["filesystems"]):
            claim(names, "fs:" + fs["name"], ("filesystems", i, "name"), "E-DUP-NAME",
                  "file system", fs["name"])
            fss.append(FileSystem(fs["name"], fs.get("net_base")))
        fs_names = {f.name for f in fss}

        # ---- strategy parameters
        st = d.get("strategy", {})
        gp = st.get("groups", {})

        def ratio(key: str, default: tuple[int, int]) -> tuple[int, int]:
            if key not in gp:
                return default
            a, b = gp[key].split(":")
            return int(a), int(b)

        params = StrategyParams(
            default=st.get("default", "projection"),
            storage_lnd=st.get("storage_lnd", "o2ib"),
            storage_net_base=st.get("storage_net_base", 1),
            groups=GroupParams(ratio("oss", (4, 3)), ratio("mds", (2, 1)),
                               gp.get("backup", "next"), gp.get("backup_priority", 1)),
        )

        # ---- client nets
        cnets: list[ClientNet] = []
        for i, cn in enumerate(d["client_nets"]):
            net = self.net(cn["name"], ("client_nets", i, "name"))
            if net is None:
                continue
            if any(c.net == net for c in cnets):
                self.err(("client_nets", i, "name"), "E-DUP-NET",
                         f"client net {net} is listed twice ({cn['name']!r} is the same net)")
            cnets.append(ClientNet(net, cn.get("interface", "")))
        cnet_set = {c.net for c in cnets}
        storage_lnd = params.storage_lnd
        for c in cnets:
            if c.net.lnd == storage_lnd:
                # allowed (e.g. o2ib compute + o2ib storage) as long as numbers cannot collide
                pass

        # ---- servers
        servers: list[Server] = []
        for i, s in enumerate(d["servers"]):
            p: Path = ("servers", i)
            claim(names, s["name"], (*p, "name"), "E-DUP-NAME", "host name", s["name"])
            claim(ips, s["ip"], (*p, "ip"), "E-DUP-IP", "storage IP", s["name"])
            if "guid" in s:
                claim(guids, s["guid"].lower(), (*p, "guid"), "E-DUP-GUID", "GUID", s["name"])
            if s["fs"] not in fs_names:
                self.err((*p, "fs"), "E-FS-UNKNOWN",
                         f"file system {s['fs']!r} is not in 'filesystems'")
            osts: tuple[int, ...] = ()
            if "osts" in s:
                raw = s["osts"]
                osts = tuple(sorted(set(nodes.parse_intset(raw) if isinstance(raw, str)
                                        else raw)))
                if s["role"] != "oss":
                    self.err((*p, "osts"), "E-OSTS", f"{s['name']} is an {s['role']}; "
                                                     "only an OSS holds OSTs")
            a = self.attach(s["attach"], (*p, "attach"), "storage", s["name"])
            if a is not None:
                servers.append(Server(s["name"], s["role"], s["fs"], s["ip"], s["interface"],
                                      s.get("guid", ""), a, osts))
        # OST indices are unique within a file system
        ost_seen: dict[tuple[str, int], str] = {}
        for i, srv in enumerate(servers):
            for o in srv.osts:
                if (srv.fs, o) in ost_seen:
                    self.err(("servers", i, "osts"), "E-DUP-OST",
                             f"OST index {o} of {srv.fs} is also on {ost_seen[(srv.fs, o)]}")
                ost_seen[(srv.fs, o)] = srv.name

        # ---- topology
        topo = d.get("topology")
        torus: Torus | None = None
        if topo is not None and topo["kind"] == "torus":
            torus = Torus(tuple(topo["dims"]), topo.get("nodes_per_chip", 1),  # type: ignore[arg-type]
                          topo.get("routing", "xyz"))

        # ---- routers
        routers: list[Router] = []
        for i, r in enumerate(d["routers"]):
            p = ("routers", i)
            claim(names, r["name"], (*p, "name"), "E-DUP-NAME", "host name", r["name"])
            claim(ips, r["storage"]["ip"], (*p, "storage", "ip"), "E-DUP-IP", "storage IP",
                  r["name"])
            for key in ("storage", "client"):
                if "guid" in r[key]:
                    claim(guids, r[key]["guid"].lower(), (*p, key, "guid"), "E-DUP-GUID", "GUID",
                          r["name"])
            cnid_path: Path = (*p, "client", "nid")
            try:
                cnid = nodes.parse_nid(r["client"]["nid"])
            except nodes.NodeSyntaxError as exc:
                self.err(cnid_path, "E-NID", str(exc))
                continue
            if cnid.net not in cnet_set:
                self.err(cnid_path, "E-ROUTER-IFACE",
                         f"router {r['name']} has no interface on a client net: {cnid.net} is "
                         f"not in client_nets ({', '.join(str(c.net) for c in cnets)})")
            if str(cnid) in nid_owner:
                owner, first = nid_owner[str(cnid)]
                self.err(cnid_path, "E-DUP-NID", f"{cnid} is also the NID of {owner} "
                                                 f"(line {self.line(first)})")
            nid_owner[str(cnid)] = (r["name"], cnid_path)
            coords = None
            if torus is not None:
                if "coords" not in r:
                    self.err(p, "E-TORUS-COORD",
                             f"router {r['name']} needs 'coords' on a torus client side")
                else:
                    coords = tuple(r["coords"])
                    if any(c >= n for c, n in zip(coords, torus.dims, strict=True)):
                        self.err((*p, "coords"), "E-TORUS-COORD",
                                 f"{list(coords)} is outside the torus {list(torus.dims)}")
            a = self.attach(r["attach"], (*p, "attach"), "storage", r["name"])
            ca = None
            if "attach" in r["client"]:
                ca = self.attach(r["client"]["attach"], (*p, "client", "attach"), "compute",
                                 r["name"])
            if a is not None:
                routers.append(Router(
                    r["name"], str(cnid), cnid.net, r["client"]["interface"], r["storage"]["ip"],
                    r["storage"]["interface"], r["storage"].get("guid", ""), a,
                    coords, r["client"].get("guid", ""), ca))  # type: ignore[arg-type]

        clients = self.clients(cnets, names, nid_owner, torus, routers, topo)

        # ---- leaves: servers without a router; balance warnings
        self.leaf_checks(servers, routers)

        if errors(self.diags) or clients is None:
            return None
        return Site(
            name=d["site"], description=d.get("description", ""), file=self.src.file,
            digest=self.digest.hexdigest(), client_nets=tuple(cnets), clients=clients,
            torus=torus, client_fabric=topo["fabric"] if topo and topo["kind"] == "fat-tree"
            else "", fabrics=self.fabric_list, routers=tuple(routers), servers=tuple(servers),
            filesystems=tuple(fss), strategy=params)

    # -------------------------------------------------------------- clients
    def clients(self, cnets: list[ClientNet], names: dict[str, Path],
                nid_owner: dict[str, tuple[str, Path]], torus: Torus | None,
                routers: list[Router], topo: dict[str, Any] | None) -> Clients | None:
        all_names: list[str] = []
        all_nids: list[str] = []
        net_idx: list[int] = []
        guids: list[str] = []
        groups: list[tuple[str, int, int]] = []
        net_pos = {c.net: i for i, c in enumerate(cnets)}
        ok = True
        for gi, g in enumerate(self.d["clients"]):
            p: Path = ("clients", gi)
            claim_key = "group:" + g["name"]
            if claim_key in names:
                self.err((*p, "name"), "E-DUP-NAME", f"client group {g['name']!r} is defined twice")
            names[claim_key] = (*p, "name")
            try:
                members = nodes.expand(g["nodes"])
            except nodes.NodeSyntaxError as exc:
                self.err((*p, "nodes"), "E-NODESET", f"not a valid node set: {exc}")
                ok = False
                continue
            bad = next((m for m in members if not nodes.HOSTNAME_RE.match(m)), None)
            if bad is not None:
                self.err((*p, "nodes"), "E-NAME", f"{bad!r} is not safe as a host name")
                ok = False
                continue
            net = self.net(g["net"], (*p, "net"))
            if net is None:
                ok = False
                continue
            if net not in net_pos:
                self.err((*p, "net"), "E-CLIENT-NET", f"{net} is not in client_nets")
                ok = False
                continue
            rule = g.get("nid", "number" if not net.ip_based else None)
            addrs: list[str] = []
            try:
                if rule is None:
                    self.err((*p, "nid"), "E-NID-RULE",
                             f"clients on {net} need 'nid: {{ip: <first address>}}' or a list")
                    ok = False
                    continue
                if rule == "number":
                    if net.ip_based:
                        raise nodes.NodeSyntaxError(f"{net.lnd} NIDs are IP addresses; "
                                                    "'number' only fits gni/kfi/ptlf")
                    addrs = [str(nodes.host_number(m)) for m in members]
                elif isinstance(rule, dict):
                    if not net.ip_based:
                        raise nodes.NodeSyntaxError(f"{net.lnd} NIDs are numbers, not IPs")
                    last = nodes.ip_add(rule["ip"], len(members) - 1)
                    del last
                    addrs = [nodes.ip_add(rule["ip"], k) for k in range(len(members))]
                else:
                    if len(rule) != len(members):
                        raise nodes.NodeSyntaxError(
                            f"{len(rule)} NIDs listed for {len(members)} nodes")
                    addrs = [str(nodes.parse_nid(f"{a}@{net}").addr) for a in rule]
            except (nodes.NodeSyntaxError, ValueError) as exc:
                self.err((*p, "nid"), "E-NID-RULE", str(exc))
                ok = False
                continue
            start = len(all_names)
            for m, a in zip(members, addrs, strict=True):
                nid = f"{a}@{net}"
                if m in names:
                    first = names[m]
                    self.err((*p, "nodes"), "E-DUP-NAME",
                             f"host {m} is also defined at {_jp(first)} (line {self.line(first)})")
                    ok = False
                else:
                    names[m] = (*p, "nodes")
                if nid in nid_owner:
                    owner, first = nid_owner[nid]
                    self.err((*p, "nodes"), "E-DUP-NID",
                             f"{nid} (NID of {m}) is also the NID of {owner} "
                             f"(line {self.line(first)})")
                    ok = False
                else:
                    nid_owner[nid] = (m, (*p, "nodes"))
                all_names.append(m)
                all_nids.append(nid)
                net_idx.append(net_pos[net])
            if "guid_base" in g:
                base = int(g["guid_base"], 16)
                guids.extend(f"0x{base + k:016x}" for k in range(len(members)))
            groups.append((g["name"], start, len(all_names)))
        if not ok:
            return None
        n = len(all_names)
        coords = np.full((n, 3), -1, dtype=np.int32)
        leaf = np.full(n, -1, dtype=np.int32)
        leaves: list[tuple[str, str]] = []
        if torus is not None and topo is not None:
            got = self.torus_coords(torus, topo, all_names, routers)
            if got is None:
                return None
            coords = got
        elif topo is not None and topo["kind"] == "fat-tree":
            got_leaf = self.fat_tree(topo, all_names, leaves)
            if got_leaf is None:
                return None
            leaf = got_leaf
        if guids and len(guids) != n:
            self.err(("clients",), "E-GUID", "guid_base must be given for every client group or "
                                             "for none")
            return None
        return Clients(tuple(all_names), tuple(all_nids), np.asarray(net_idx, dtype=np.int32),
                       tuple(c.net for c in cnets), tuple(c.interface for c in cnets),
                       tuple(groups), coords, leaf, tuple(leaves), tuple(guids))

    def torus_coords(self, torus: Torus, topo: dict[str, Any], names: list[str],
                     routers: list[Router]) -> np.ndarray[Any, Any] | None:
        X, Y, Z = torus.dims
        npc = torus.nodes_per_chip
        chips = X * Y * Z
        spec = topo.get("coordinates", {"rule": "linear"})
        occupancy = np.zeros(chips, dtype=np.int64)
        for i, r in enumerate(routers):
            if r.coords is None:
                continue
            x, y, z = r.coords
            if x < X and y < Y and z < Z:
                occupancy[x + X * (y + Y * z)] += 1
        path: Path = ("topology", "coordinates")
        n = len(names)
        if "csv" in spec:
            coords = self.coords_csv(spec["csv"], names, path)
            if coords is None:
                return None
        else:
            cap = npc - occupancy
            free = np.repeat(np.arange(chips), np.clip(cap, 0, None))
            if spec.get("skip_routers", True) is False:
                free = np.repeat(np.arange(chips), npc)
            if len(free) < n:
                self.err(path, "E-TORUS-FULL",
                         f"{n} clients do not fit in a {X}x{Y}x{Z} torus with {npc} node(s) per "
                         f"chip ({chips * npc} slots, {int(occupancy.sum())} taken by routers)")
                return None
            chip = free[:n]
            if spec.get("order", "xyz") == "xyz":
                coords = np.stack([chip % X, (chip // X) % Y, chip // (X * Y)], axis=1)
            else:  # z fastest
                coords = np.stack([chip // (Y * Z), (chip // Z) % Y, chip % Z], axis=1)
        flat = coords[:, 0] + X * (coords[:, 1] + Y * coords[:, 2])
        total = occupancy + np.bincount(flat, minlength=chips)
        over = np.nonzero(total > npc)[0]
        if len(over):
            c = int(over[0])
            pos = [c % X, (c // X) % Y, c // (X * Y)]
            self.err(path, "E-TORUS-FULL",
                     f"{len(over)} torus position(s) hold more than {npc} node(s), e.g. {pos} "
                     f"holds {int(total[c])} (clients and routers together)")
            # routers placed on a full chip are reported at the router too
            for i, r in enumerate(routers):
                if r.coords is not None and list(r.coords) == pos:
                    self.err(("routers", i, "coords"), "E-TORUS-FULL",
                             f"{r.name} sits on over-filled position {pos}")
            return None
        return coords.astype(np.int32)

    def coords_csv(self, rel: str, names: list[str],
                   path: Path) -> np.ndarray[Any, Any] | None:
        base = os.path.dirname(os.path.abspath(self.src.file))
        full = os.path.normpath(os.path.join(base, rel))
        if os.path.isabs(rel) or ".." in rel.split("/"):
            self.err((*path, "csv"), "E-PATH", f"{rel!r} must be a path below the inventory's "
                                               "directory")
            return None
        try:
            text = read_text(full)
        except InputError as exc:
            self.err((*path, "csv"), "E-TORUS-CSV",
                     f"cannot read {rel}: {exc.diagnostics[0].message}")
            return None
        self.digest.update(text.encode())
        index = {m: k for k, m in enumerate(names)}
        coords = np.full((len(names), 3), -1, dtype=np.int64)
        X, Y, Z = self.d["topology"]["dims"]
        for lineno, row in enumerate(csv.reader(text.splitlines()), 1):
            if not row or row[0].startswith("#") or row[0] == "node":
                continue
            where = f"{rel}:{lineno}"
            if len(row) != 4:
                self.err((*path, "csv"), "E-TORUS-CSV", f"{where}: expected node,x,y,z")
                return None
            k = index.get(row[0].strip())
            if k is None:
                continue  # the CSV may list the whole machine (service nodes included)
            try:
                xyz = [int(v) for v in row[1:]]
            except ValueError:
                self.err((*path, "csv"), "E-TORUS-CSV", f"{where}: coordinates must be integers")
                return None
            if any(not 0 <= c < n for c, n in zip(xyz, (X, Y, Z), strict=True)):
                self.err((*path, "csv"), "E-TORUS-COORD",
                         f"{where}: {row[0]} at {xyz} is outside the torus {[X, Y, Z]}")
                return None
            coords[k] = xyz
        missing = np.nonzero(coords[:, 0] < 0)[0]
        if len(missing):
            self.err((*path, "csv"), "E-TORUS-CSV",
                     f"{rel} has no coordinates for {len(missing)} client(s), e.g. "
                     f"{names[int(missing[0])]}")
            return None
        return coords

    def fat_tree(self, topo: dict[str, Any], names: list[str],
                 leaves: list[tuple[str, str]]) -> np.ndarray[Any, Any] | None:
        index = {m: k for k, m in enumerate(names)}
        leaf = np.full(len(names), -1, dtype=np.int32)
        leaf_id: dict[tuple[str, str], int] = {}
        fabric = topo["fabric"]
        if self.fabric_roles.get(fabric) != "compute":
            self.err(("topology", "fabric"), "E-ATTACH-FABRIC",
                     f"{fabric!r} is not a fabric with role 'compute'")
            return None
        for ai, at in enumerate(topo["attach"]):
            p: Path = ("topology", "attach", ai)
            try:
                members = nodes.expand(at["nodes"])
            except nodes.NodeSyntaxError as exc:
                self.err((*p, "nodes"), "E-NODESET", str(exc))
                return None
            port = at.get("first_port", 1)
            for m in members:
                k = index.get(m)
                if k is None:
                    self.err((*p, "nodes"), "E-ATTACH-NODE", f"{m} is not a client")
                    return None
                a = self.attach({"switch": at["switch"], "leaf": at["leaf"], "port": port}, p,
                                "compute", m)
                if a is None:
                    return None
                if leaf[k] >= 0:
                    self.err((*p, "nodes"), "E-PORT-TAKEN", f"{m} is attached twice")
                    return None
                leaf[k] = leaf_id.setdefault(a.module, len(leaf_id))
                port += 1
        if (leaf < 0).any():
            k = int(np.nonzero(leaf < 0)[0][0])
            self.err(("topology", "attach"), "E-ATTACH-NODE",
                     f"{int((leaf < 0).sum())} client(s) are not attached, e.g. {names[k]}")
            return None
        leaves.extend(sorted(leaf_id, key=lambda m: leaf_id[m]))
        return leaf

    # -------------------------------------------------------------- leaves
    def leaf_checks(self, servers: list[Server], routers: list[Router]) -> None:
        by_leaf_srv: dict[tuple[str, str], list[int]] = defaultdict(list)
        by_leaf_rtr: Counter[tuple[str, str]] = Counter()
        for i, s in enumerate(servers):
            by_leaf_srv[s.attach.module].append(i)
        for r in routers:
            by_leaf_rtr[r.attach.module] += 1
        for module, idx in sorted(by_leaf_srv.items()):
            if by_leaf_rtr[module] == 0:
                i = idx[0]
                label = f"{module[0]}/{module[1]}" if module[1] else module[0]
                self.err(("servers", self._server_pos(servers[i]), "attach"), "E-LEAF-NO-ROUTER",
                         f"leaf {label} holds {len(idx)} server(s) "
                         f"({nodes.fold(servers[j].name for j in idx)}) but no LNet router: "
                         "fine-grained routing would have to cross the spine")
        used = {m: c for m, c in by_leaf_rtr.items() if m in by_leaf_srv}
        if used and max(used.values()) - min(used.values()) > 0:
            counts = Counter(used.values())
            lo = min(used, key=lambda m: (used[m], m))
            self.warn(("routers",), "W-ROUTER-SPREAD",
                      "routers are spread unevenly over the leaf modules that hold servers: "
                      + ", ".join(f"{n} leaves with {c}" for c, n in sorted(counts.items()))
                      + f" (e.g. {lo[0]}/{lo[1]} has {used[lo]})")
        # compute fabric: more than one router (IO node) per leaf (LANL's lesson)
        per_leaf: dict[tuple[str, str], list[str]] = defaultdict(list)
        for r in routers:
            if r.client_attach is not None:
                per_leaf[r.client_attach.module].append(r.name)
        for module, rs in sorted(per_leaf.items()):
            if len(rs) > 1:
                self.warn(("routers",), "W-ROUTERS-PER-LEAF",
                          f"{len(rs)} routers ({nodes.fold(rs)}) share compute-fabric leaf "
                          f"{module[0]}/{module[1]}; OpenSM ftree concentrates their traffic "
                          "(spread IO nodes one per leaf)")

    def _server_pos(self, srv: Server) -> int:
        for i, s in enumerate(self.d["servers"]):
            if s["name"] == srv.name:
                return i
        return 0


def _jp(path: Path) -> str:
    from lnetgen.diagnostics import json_path

    return json_path(path)


def check_source(src: Source) -> tuple[Site | None, list[Diagnostic]]:
    """Schema then meaning checks on a loaded document."""
    diags = _schema_diags(src)
    if diags:
        return None, sorted(diags)
    checker = _Checker(src)
    checker.digest.update(_canonical_bytes(src))
    try:
        site = checker.run()
    except nodes.NodeSyntaxError as exc:  # a syntax the schema let through
        checker.err((), "E-SYNTAX", str(exc))
        site = None
    return site, sorted(checker.diags)


def _canonical_bytes(src: Source) -> bytes:
    import json

    return json.dumps(src.data, sort_keys=True, separators=(",", ":")).encode()


def check(path: str) -> tuple[Site | None, list[Diagnostic]]:
    """Load and check an inventory file; never raises for a user mistake."""
    try:
        src = load_file(path)
    except InputError as exc:
        return None, exc.diagnostics
    return check_source(src)


def load_site(path: str) -> tuple[Site, list[Diagnostic]]:
    """The validated ``Site`` and its warnings; raises ``InputError`` if there are errors."""
    site, diags = check(path)
    if site is None or errors(diags):
        raise InputError(diags)
    return site, diags


def all_hosts(site: Site) -> Iterable[str]:
    yield from site.clients.names
    for r in site.routers:
        yield r.name
    for s in site.servers:
        yield s.name


def ceil_div(a: int, b: int) -> int:
    return math.ceil(a / b)
