#!/usr/bin/env python3
"""Write the large reference site inventories: spider.yaml, bluewaters.yaml, wolf.yaml and
slingshot.yaml.

The sizes of these sites (tens of thousands of clients, hundreds of routers and servers) come
from the seed papers; everything the papers do not give (torus coordinates of routers, IP
addresses, GUIDs, NIDs of routers, port numbers) is derived here by simple, documented, fully
deterministic rules.  Each generated file starts with a comment block that says which is which.

Usage: ``python sites/generate.py [OUTPUT_DIR]`` (default: the directory of this script).
Standard library only; running it twice gives byte-identical files.
"""

from __future__ import annotations

import ipaddress
import json
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

Scalar = str | int | bool
Value = Scalar | list[int] | dict[str, "Value"]

# ----------------------------------------------------------------------------- YAML writing

# Strings that YAML 1.1 would read as something other than the same string.
_YAML11_WORDS = {
    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
}  # fmt: skip
_PLAIN_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_PLAIN_IP = re.compile(r"^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$")


def scalar(v: Scalar) -> str:
    """One YAML scalar; strings are quoted unless plainly safe (names, IPv4 addresses)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if (_PLAIN_WORD.match(v) and v.lower() not in _YAML11_WORDS) or _PLAIN_IP.match(v):
        return v
    return json.dumps(v)  # a JSON string is a valid YAML double-quoted scalar


def flow(v: Value) -> str:
    """A value in YAML flow style: ``{a: 1, b: [1, 2]}``."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    return scalar(v)


def wrap_mapping(prefix: str, d: dict[str, Value], width: int = 100) -> list[str]:
    """``prefix`` + ``d`` as a flow mapping, wrapped between entries to stay within ``width``.

    Continuation lines line up one column right of the opening brace.
    """
    parts = [f"{k}: {flow(v)}" for k, v in d.items()]
    head = prefix + "{"
    cont = " " * len(head)
    lines: list[str] = []
    cur = head
    for i, part in enumerate(parts):
        piece = part + ("}" if i == len(parts) - 1 else ",")
        if cur in (head, cont):
            cur += piece
        elif len(cur) + 1 + len(piece) > width:
            lines.append(cur)
            cur = cont + piece
        else:
            cur += " " + piece
    lines.append(cur)
    return lines


def block_item(d: dict[str, Value], indent: int = 2) -> list[str]:
    """A list item as a block mapping whose values are written in flow style (a list of
    mappings as a block list of flow mappings)."""
    pad = " " * indent
    lines = []
    for i, (k, v) in enumerate(d.items()):
        lead = f"{pad}- {k}: " if i == 0 else f"{pad}  {k}: "
        if isinstance(v, dict):
            lines += wrap_mapping(lead, v)
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            lines.append(lead.rstrip())
            for x in v:
                assert isinstance(x, dict)
                lines += flow_item(x, indent + 4)
        else:
            lines.append(lead + flow(v))
    return lines


def flow_item(d: dict[str, Value], indent: int = 2) -> list[str]:
    """A list item as one flow mapping, wrapped to stay within 100 columns."""
    return wrap_mapping(" " * indent + "- ", d)


def comment(text: str) -> list[str]:
    return [("# " + line).rstrip() for line in text.strip("\n").split("\n")]


# ----------------------------------------------------------------------------- helpers


def guid(prefix: str, kind: int, serial: int) -> str:
    """A 64-bit GUID: 6-hex-digit vendor OUI prefix, 2-digit kind, 8-digit serial.

    Distinct (kind, serial) pairs give distinct GUIDs, so one counter per kind keeps a whole site
    free of duplicates.
    """
    assert len(prefix) == 6 and 0 <= kind < 0x100 and 0 <= serial < 0x100000000
    return f"0x{prefix}{kind:02x}{serial:08x}"


def ip(base: str, offset: int) -> str:
    return str(ipaddress.IPv4Address(int(ipaddress.IPv4Address(base)) + offset))


def spread(n: int, length: int) -> list[int]:
    """``n`` evenly spaced positions on an axis of ``length``: floor((k + 1/2) * length / n)."""
    return [(2 * k + 1) * length // (2 * n) for k in range(n)]


def rates(
    torus: dict[str, str] | None, torus_source: str, each: dict[str, tuple[str, str]]
) -> list[str]:
    """The ``rates:`` section: every figure with its source next to it."""
    lines = ["rates:"]
    if torus is not None:
        lines += wrap_mapping("  torus_link: ", {**torus, "source": torus_source})
    for key, (rate, source) in each.items():
        lines += wrap_mapping(f"  {key}: ", {"rate": rate, "source": source})
    return [*lines, ""]


def storage_director(name: str) -> list[str]:
    """The invented storage director of Wolf and Slingshot: 8 leaf modules of 18 host ports
    and 18 uplinks, 9 spines."""
    return block_item(
        {
            "name": name,
            "kind": "director",
            "spines": 9,
            "guid": guid("0002c9", 0x01, 1),
            "leaves": {"count": 8, "prefix": "L", "ports": 18, "uplinks": 18},
        },
        indent=6,
    )


def closing(fs: str, routers: list[list[str]], servers: list[list[str]]) -> list[str]:
    """The end of an inventory with one file system: ``filesystems``, ``routers``, ``servers``."""
    return [
        "",
        "filesystems:",
        f"  - {{name: {fs}}}",
        "",
        *section("routers", routers),
        "",
        *section("servers", servers),
    ]


def section(key: str, items: Iterable[list[str]]) -> list[str]:
    lines = [f"{key}:"]
    for it in items:
        lines.extend(it)
    return lines


# ----------------------------------------------------------------------------- Spider (seed 000)

SPIDER_HEADER = """
ORNL Jaguar XT5 + Spider/SION, after seed 000 (Dillow, Shipman, Oral, Zhang: "I/O Congestion
Avoidance via Routing and Object Placement").
Generated by sites/generate.py -- edit the script, not this file.

From the paper:
  - 18,688 compute nodes on a SeaStar2+ 3-D torus with dimension-order routing
    (X+, Y+, Z+, X-, Y-, Z-): routing "seastar".
  - SION: two Cisco 7024D core switches, each 24 leaf modules of 12 external ports and
    12 uplinks; 32 modules in use (16 per core switch); on each module 6 router (SIO) ports
    and 6 OSS ports.
  - 48 DDN S2A9900 couplets x 4 OSS = 192 OSS, 7 OSTs each = 1,344 OSTs; file systems widow1
    (672 OSTs = 96 OSS), widow2 and widow3 (336 OSTs = 48 OSS each).
  - Projection (the production layout): one remote LNet per OSS, 192 in all; round-robin
    and nearest-neighbor: one remote LNet per leaf module, 32 in all.
Assumptions and inventions:
  - Torus shape 25x32x24 (a common description of Jaguar; the paper gives none), one node
    per SeaStar.
  - Client net "gni": Jaguar's clients were on the SeaStar-era 'ptl' LND, which current Lustre
    no longer parses; the modern Cray LND name stands in for it.  NID = node number.
  - The paper counts 196 routers: 192 paired with OSS plus 4 on the MDS path.  The 4 MDS-path
    routers and one MDS per file system (which the paper does not place) sit on module L17 of
    core1 (ports 1-4 routers, 5-7 the MDS of widow1, widow2, widow3); the third (aggregation)
    7024D is not modeled.  Projection yields 192 OSS nets + 3 MDS nets.
  - Modules L01-L16 of each core switch are the ones in use; ports 1-6 hold routers, 7-12 OSS.
    widow1 sits on L01-L08, widow2 on L09-L12, widow3 on L13-L16 of both switches, so every
    file system spans both core switches.  OST indices start at 0 in each file system.
  - Router torus coordinates: a 4 x 8 x 6 lattice (x in {3,9,15,21}, y = 2,6,...,30,
    z = 2,6,...,22); router j (0-5) of module m sits in z-plane j at lattice column
    (m + 13 j) mod 32, so each module's routers are spread over the machine.  Clients fill the
    remaining torus positions in node-number order (linear, x fastest).
  - Router names, NIDs (19001-19192), IP addresses, GUIDs and spine counts are invented.
"""


def spider() -> list[str]:
    dims = (25, 32, 24)
    xs, ys, zs = spread(4, dims[0]), spread(8, dims[1]), spread(6, dims[2])
    switches = ("core1", "core2")
    leaves = [f"L{k:02d}" for k in range(1, 17)]

    def fs_of(leaf_no: int) -> str:
        return "widow1" if leaf_no <= 8 else "widow2" if leaf_no <= 12 else "widow3"

    routers: list[list[str]] = []
    servers: list[list[str]] = []
    ost_next = {"widow1": 0, "widow2": 0, "widow3": 0}
    oss_no = {"widow1": 0, "widow2": 0, "widow3": 0}
    r_no = 0
    for si, sw in enumerate(switches):
        for li, leaf in enumerate(leaves):
            m = si * 16 + li  # module index 0..31
            for j in range(6):
                r_no += 1
                col = (m + 13 * j) % 32
                coords = [xs[col % 4], ys[col // 4], zs[j]]
                routers.append(
                    block_item(
                        {
                            "name": f"rtr{r_no:03d}",
                            "client": {"nid": f"{19000 + r_no}@gni", "interface": "ipogif0"},
                            "storage": {
                                "ip": ip("10.36.1.0", r_no),
                                "interface": "ib0",
                                "guid": guid("0002c9", 0x0A, r_no),
                            },
                            "attach": {"switch": sw, "leaf": leaf, "port": j + 1},
                            "coords": coords,
                        }
                    )
                )
            fs = fs_of(li + 1)
            for j in range(6):
                oss_no[fs] += 1
                first = ost_next[fs]
                ost_next[fs] += 7
                n = len(servers) + 1
                servers.append(
                    flow_item(
                        {
                            "name": f"{fs}-oss{oss_no[fs]:02d}",
                            "role": "oss",
                            "fs": fs,
                            "ip": ip("10.36.2.0", n),
                            "interface": "ib0",
                            "guid": guid("0002c9", 0x0B, n),
                            "attach": {"switch": sw, "leaf": leaf, "port": 7 + j},
                            "osts": f"{first}-{first + 6}",
                        }
                    )
                )
    assert r_no == 192 and len(servers) == 192
    assert ost_next == {"widow1": 672, "widow2": 336, "widow3": 336}
    # the 4 MDS-path routers and one MDS per file system, on module L17 of core1
    for j in range(4):
        r_no += 1
        routers.append(
            block_item(
                {
                    "name": f"rtr{r_no:03d}",
                    "client": {"nid": f"{19000 + r_no}@gni", "interface": "ipogif0"},
                    "storage": {
                        "ip": ip("10.36.1.0", r_no),
                        "interface": "ib0",
                        "guid": guid("0002c9", 0x0A, r_no),
                    },
                    "attach": {"switch": "core1", "leaf": "L17", "port": j + 1},
                    "coords": [xs[j] + 1, ys[2 * j] + 1, zs[j] + 1],
                }
            )
        )
    for j, fs in enumerate(("widow1", "widow2", "widow3")):
        n = len(servers) + 1
        servers.append(
            flow_item(
                {
                    "name": f"{fs}-mds01",
                    "role": "mds",
                    "fs": fs,
                    "ip": ip("10.36.3.0", j + 1),
                    "interface": "ib0",
                    "guid": guid("0002c9", 0x0C, j + 1),
                    "attach": {"switch": "core1", "leaf": "L17", "port": 5 + j},
                }
            )
        )

    lines = comment(SPIDER_HEADER)
    lines += [
        "site: spider",
        "description: "
        + scalar(
            "ORNL Jaguar XT5 and Spider over SION (18,688 clients, 196 routers, 192 OSS, 3 MDS)"
        ),
        "",
        "strategy:",
        "  default: projection",
        "  storage_lnd: o2ib",
        "  storage_net_base: 1",
        '  groups: {oss: "3:3", mds: "4:3", backup: balanced, backup_priority: 1}',
        "",
        "client_nets:",
        "  - {name: gni, interface: ipogif0}",
        "",
        "clients:",
        '  - {name: compute, nodes: "nid[00001-18688]", net: gni, nid: number}',
        "",
        "topology:",
        "  kind: torus",
        f"  dims: {flow(list(dims))}",
        "  nodes_per_chip: 1",
        "  routing: seastar",
        "  # candidate router positions for `lnetgen advise routers` (invented: free SIO slots)",
        "  router_slots: "
        + flow([[x, y, z] for z in (0, 12) for y in (0, 8, 16, 24) for x in (6, 18)]),
        "  coordinates: {rule: linear, order: xyz, skip_routers: true}",
        "",
        "# Rates: the figures seed 000 measured; the SIO nodes' forwarding rate is not given",
        "# (n/a: routers are not a limit in predictions).  A host's InfiniBand port (router,",
        "# OSS) is the one DDR port rate seed 000 measured, a DDN couplet's port in isolation;",
        "# the switches' internal links are the DDR specification (no host adapter in the way).",
        *rates(
            {"x": "3020 MB/s", "y": "3020 MB/s", "z": "3020 MB/s"},
            "seed 000 s4: one-way SeaStar2+ link, measured (Fig. 3), the same in every dimension",
            {
                "injection": ("1705 MB/s", "seed 000 s4: one node's injection from user space"),
                "ib_link": (
                    "1500 MB/s",
                    "seed 000 s3: a 4x DDR port of a DDN couplet, measured in isolation",
                ),
                "uplink": ("2000 MB/s", "assumption: InfiniBand 4x DDR data rate (16 Gbit/s)"),
                "oss": (
                    "1250 MB/s",
                    "seed 000 s3: a DDN S2A9900 singlet reaches ~2,500 MB/s; it serves 2 OSS",
                ),
                "ost": ("180 MB/s", "seed 000 s3: each OST contributes ~180 MB/s under full load"),
            },
        ),
        "fabrics:",
        "  - name: sion",
        "    role: storage",
        "    switches:",
    ]
    for si, sw in enumerate(switches):
        lines += block_item(
            {
                "name": sw,
                "kind": "director",
                "spines": 12,
                "guid": guid("0005ad", 0x01, si + 1),
                "leaves": {"count": 24, "prefix": "L", "ports": 12, "uplinks": 12},
            },
            indent=6,
        )
    lines += [
        "",
        "# widow1 has no net_base: its nets are numbered from storage_net_base (1); widow2 and",
        "# widow3 start at 201 and 301, above anything widow1 can use (at most 97 nets).",
        "filesystems:",
        "  - {name: widow1}",
        "  - {name: widow2, net_base: 201}",
        "  - {name: widow3, net_base: 301}",
        "",
    ]
    lines += section("routers", routers)
    lines.append("")
    lines += section("servers", servers)
    return lines


# ----------------------------------------------------------------------------- Blue Waters (001)

BLUEWATERS_HEADER = """
NCSA Blue Waters, after seeds 001 (Swan, Petesch: "Blue Waters I/O Performance") and 004
(Blue Waters file system study: OST choice by torus distance to the primary LNet group).
Generated by sites/generate.py -- edit the script, not this file.

From the papers:
  - 25,712 compute nodes (22,640 XE + 3,072 XK) on a Gemini 3-D torus 23x24x24, two nodes per
    Gemini, dimension-order routing X then Y then Z: routing "xyz".
  - Three Cray Sonexion-1600 file systems: HOME 3 racks, PROJECTS 3 racks, SCRATCH 30 racks;
    6 SSU (12 OSS) per rack, the left 6 OSS on one TOR IB switch and the right 6 on another;
    4 OSTs per OSS: 432 OSS, 1,728 OSTs (HOME and PROJECTS 144 each, SCRATCH 1,440).
  - Fine-grained routing in "4:3" groups: 4 LNet routers on one XIO blade + 3 OSS per LNet,
    48 + 48 + 480 = 576 OSS routers in 12 + 12 + 120 groups; 582 routers in all, i.e. 6 on the
    MDS paths; a backup group per group.  LNet names like o2ib3037 (a SCRATCH group).
Assumptions and inventions:
  - Net numbering: HOME from o2ib1001, PROJECTS from o2ib2001, SCRATCH from o2ib3001, so
    o2ib3037 is a SCRATCH group as in the paper (the exact group it was is not known).
  - Each file system has its own IB fabric; its two metadata servers (seed 001 Table I), an
    active MDS and its failover partner, sit on their own TOR switch with 2 routers (one
    "2:2" group), so 3 x 2 = 6 MDS-path routers (582 - 576); the MDS TORs, switch names, the
    failover pairing and the 36-port TOR size are invented.
  - On each TOR, ports 1-8 hold the 8 routers (two XIO blades) and ports 9-14 the 6 OSS.
  - Router torus coordinates: each XIO blade's 4 routers sit on two Geminis adjacent in Y
    (2 nodes each; which axis links a blade's Geminis is an assumption).  The 144 blades fill
    a 4 x 6 x 6 lattice (x in {2,8,14,20}, y in {1,5,...,21} and y+1, z in {2,6,...,22}),
    blade b at lattice cell (37 b) mod 144 so that each file system's blades are spread over
    the machine; the three MDS router pairs take one Gemini each at x = 11.  Clients fill the
    remaining slots in node-number order (linear, x fastest).
  - Router names, NIDs (26001-26582), IP addresses and GUIDs are invented.
"""

BW_FILESYSTEMS = (("home", 3, 1001), ("projects", 3, 2001), ("scratch", 30, 3001))


def bluewaters() -> list[str]:
    dims = (23, 24, 24)
    xs = spread(4, dims[0])  # 2, 8, 14, 20
    ys = [1 + 4 * k for k in range(6)]  # 1..21; a blade also uses y + 1
    zs = spread(6, dims[2])  # 2, 6, ..., 22
    cells = [(x, y, z) for z in zs for y in ys for x in xs]
    assert len(cells) == 144
    mds_gemini = [(11, 11, z) for z in spread(3, dims[2])]

    fabrics: list[str] = []
    routers: list[list[str]] = []
    servers: list[list[str]] = []
    counters = {"router": 0, "blade": 0, "switch": 0, "server": 0}

    def add_router(
        fs_i: int, rack: int, host: int, switch: str, port: int, coords: tuple[int, int, int]
    ) -> None:
        counters["router"] += 1
        n = counters["router"]
        routers.append(
            block_item(
                {
                    "name": f"rtr{n:03d}",
                    "client": {"nid": f"{26000 + n}@gni", "interface": "ipogif0"},
                    "storage": {
                        "ip": f"10.10{fs_i}.{rack}.{host}",
                        "interface": "ib0",
                        "guid": guid("0002c9", 0x0A, n),
                    },
                    "attach": {"switch": switch, "port": port},
                    "coords": list(coords),
                }
            )
        )

    def add_server(
        name: str,
        role: str,
        fs: str,
        addr: str,
        switch: str,
        port: int,
        osts: str = "",
        failover: str = "",
    ) -> None:
        counters["server"] += 1
        d: dict[str, Value] = {
            "name": name,
            "role": role,
            "fs": fs,
            "ip": addr,
            "interface": "ib0",
            "guid": guid("0002c9", 0x0B, counters["server"]),
            "attach": {"switch": switch, "port": port},
        }
        if osts:
            d["osts"] = osts
        if failover:
            d["failover"] = failover
        servers.append(flow_item(d))

    def add_tor(name: str) -> list[str]:
        counters["switch"] += 1
        return flow_item(
            {
                "name": name,
                "kind": "tor",
                "ports": 36,
                "guid": guid("0002c9", 0x01, counters["switch"]),
            },
            indent=6,
        )

    for fs_i, (fs, racks, _base) in enumerate(BW_FILESYSTEMS, start=1):
        fabrics += [f"  - name: {fs}-ib", "    role: storage", "    switches:"]
        width = 3 if racks * 12 > 99 else 2
        ost = 0
        oss = 0
        for rack in range(1, racks + 1):
            for side_i, side in enumerate(("l", "r")):
                tor = f"{fs}{rack:02d}-tor-{side}"
                fabrics += add_tor(tor)
                for blade_in_tor in range(2):
                    b = counters["blade"]
                    counters["blade"] += 1
                    x, y, z = cells[(37 * b) % 144]
                    for k in range(4):
                        port = blade_in_tor * 4 + k + 1
                        add_router(fs_i, rack, side_i * 8 + port, tor, port, (x, y + k // 2, z))
                for k in range(6):
                    oss += 1
                    add_server(
                        f"{fs}-oss{oss:0{width}d}",
                        "oss",
                        fs,
                        f"10.10{fs_i}.{rack}.{100 + side_i * 6 + k + 1}",
                        tor,
                        9 + k,
                        f"{ost}-{ost + 3}",
                    )
                    ost += 4
        tor = f"{fs}-mds-tor"
        fabrics += add_tor(tor)
        for k in range(2):
            add_router(fs_i, 0, k + 1, tor, k + 1, mds_gemini[fs_i - 1])
        add_server(f"{fs}-mds1", "mds", fs, f"10.10{fs_i}.0.101", tor, 3, failover=f"{fs}-mds2")
        add_server(f"{fs}-mds2", "mds", fs, f"10.10{fs_i}.0.102", tor, 4, failover=f"{fs}-mds1")
    assert counters["router"] == 582 and counters["blade"] == 144
    assert counters["server"] == 438

    lines = comment(BLUEWATERS_HEADER)
    lines += [
        "site: bluewaters",
        "description: "
        + scalar(
            "NCSA Blue Waters and three Sonexion-1600 file systems (25,712 clients, 582 routers)"
        ),
        "",
        "strategy:",
        "  default: groups",
        "  storage_lnd: o2ib",
        "  storage_net_base: 1",
        '  groups: {oss: "4:3", mds: "2:2", backup: balanced, backup_priority: 1}',
        "",
        "client_nets:",
        "  - {name: gni, interface: ipogif0}",
        "",
        "clients:",
        '  - {name: compute, nodes: "nid[00001-25712]", net: gni, nid: number}',
        "",
        "topology:",
        "  kind: torus",
        f"  dims: {flow(list(dims))}",
        "  nodes_per_chip: 2",
        "  routing: xyz",
        "  # candidate router positions for `lnetgen advise routers` (invented: free service",
        "  # slots among the 784 - 582 service nodes seed 001 counts)",
        "  router_slots: "
        + flow([[x, y, z] for z in (0, 12) for y in (3, 11, 19) for x in (5, 17)]),
        "  coordinates: {rule: linear, order: xyz, skip_routers: true}",
        "",
        "# Rates: seed 001 gives the routers' and the SSUs' figures; it says only that Z links",
        "# carry more than X or Y, so the Gemini link rates are the published ones (an",
        "# assumption).  No node injection, InfiniBand or per-OST figure: n/a.",
        *rates(
            {"x": "9.375 GB/s", "y": "4.6875 GB/s", "z": "15 GB/s"},
            "assumption: Gemini X 75, Y 37.5, Z 120 Gbit/s per direction as published for "
            "Blue Waters; seed 001 s3: Z has more bandwidth than X or Y",
            {
                "router": (
                    "2.6 GB/s",
                    "seed 001 Table II: 48 routers = 124.8 GB/s of LNet bandwidth",
                ),
                "oss": (
                    "2.5 GB/s",
                    "seed 001 s1.B: an SSU (2 OSS) sustains 5 GB/s (6 GB/s peak)",
                ),
            },
        ),
        "fabrics:",
        *fabrics,
        "",
        "filesystems:",
        *[f"  - {{name: {fs}, net_base: {base}}}" for fs, _r, base in BW_FILESYSTEMS],
        "",
    ]
    lines += section("routers", routers)
    lines.append("")
    lines += section("servers", servers)
    return lines


# ----------------------------------------------------------------------------- Wolf (seed 002)

WOLF_HEADER = """
LANL Wolf, after seed 002 (LANL slides on Wolf's IO nodes and OpenSM fat-tree routing).
Generated by sites/generate.py -- edit the script, not this file.

From the paper:
  - Compute fabric: one InfiniBand director (Intel True Scale 12800-360, "wfibcore1") with
    36 line cards of 18 host ports + 18 spine ports, and 18 spine cards of 36 ports;
    OpenSM fat-tree routing.
  - 640 hosts on it, of which 24 are IO nodes (the LNet routers), each on port 18 of a
    different line card; the other 616 are compute nodes.
Assumptions and inventions:
  - IO nodes on line cards L01-L24 (the paper does not say which 24).  Compute nodes fill the
    host ports in name order: L01-L24 ports 1-17, L25-L35 ports 1-18, L36 ports 1-10; ports
    11-18 of L36 are empty (648 ports, 640 hosts).
  - The storage side is not described by the paper (LANL's Lustre IB backbone served the L1,
    L2 and L3 file systems): it is invented here as one director with 8 leaf modules, each
    holding 3 routers and 3 OSS (groups "3:3"), and one file system lustre1 of 24 OSS with
    4 OSTs each.  No MDS is modeled.
  - Storage nets are numbered from o2ib100 so they cannot collide with the client net o2ib.
  - Host names, IP addresses and GUIDs (QLogic/Intel OUI 00:11:75 on the compute fabric,
    Mellanox 00:02:c9 on the storage fabric) are invented.
"""


def wolf() -> list[str]:
    core = "wfibcore1"
    io_cards = list(range(1, 25))
    n_compute = 616
    # compute nodes fill line cards in name order, from port 1
    attach: list[tuple[int, int]] = []  # (line card, compute nodes on it)
    left = n_compute
    for card in range(1, 37):
        cap = 17 if card in io_cards else 18
        take = min(cap, left)
        if take:
            attach.append((card, take))
        left -= take
    assert left == 0

    topo_attach: list[list[str]] = []
    first = 1
    for card, take in attach:
        nodes = f"wolf[{first:03d}-{first + take - 1:03d}]"
        topo_attach.append(
            flow_item(
                {"nodes": nodes, "switch": core, "leaf": f"L{card:02d}", "first_port": 1}, indent=4
            )
        )
        first += take

    routers: list[list[str]] = []
    servers: list[list[str]] = []
    for i, card in enumerate(io_cards, start=1):
        module = (i - 1) // 3 + 1
        routers.append(
            block_item(
                {
                    "name": f"wolf-io{i:02d}",
                    "client": {
                        "nid": f"{ip('10.1.3.0', i)}@o2ib",
                        "interface": "ib0",
                        "guid": guid("001175", 0x0A, i),
                        "attach": {"switch": core, "leaf": f"L{card:02d}", "port": 18},
                    },
                    "storage": {
                        "ip": ip("10.2.1.0", i),
                        "interface": "ib1",
                        "guid": guid("0002c9", 0x0A, i),
                    },
                    "attach": {
                        "switch": "lbcore1",
                        "leaf": f"L{module:02d}",
                        "port": (i - 1) % 3 + 1,
                    },
                }
            )
        )
    for i in range(1, 22):
        module = (i - 1) // 3 + 1
        servers.append(
            flow_item(
                {
                    "name": f"lustre1-oss{i:02d}",
                    "role": "oss",
                    "fs": "lustre1",
                    "ip": ip("10.2.2.0", i),
                    "interface": "ib0",
                    "guid": guid("0002c9", 0x0B, i),
                    "attach": {
                        "switch": "lbcore1",
                        "leaf": f"L{module:02d}",
                        "port": 3 + (i - 1) % 3 + 1,
                    },
                    "osts": f"{4 * (i - 1)}-{4 * i - 1}",
                }
            )
        )
    servers.append(
        flow_item(
            {
                "name": "lustre1-mds01",
                "role": "mds",
                "fs": "lustre1",
                "ip": ip("10.2.3.0", 1),
                "interface": "ib0",
                "guid": guid("0002c9", 0x0C, 1),
                "attach": {"switch": "lbcore1", "leaf": "L08", "port": 4},
            }
        )
    )

    lines = comment(WOLF_HEADER)
    lines += [
        "site: wolf",
        "description: "
        + scalar(
            "LANL Wolf: 616 compute nodes, 24 IO nodes on one IB director; invented storage side"
        ),
        "",
        "strategy:",
        "  default: groups",
        "  storage_lnd: o2ib",
        "  storage_net_base: 100",
        '  groups: {oss: "3:3", mds: "3:1", backup: balanced, backup_priority: 1}',
        "",
        "client_nets:",
        "  - {name: o2ib, interface: ib0}",
        "",
        "clients:",
        *flow_item(
            {
                "name": "compute",
                "nodes": f"wolf[001-{n_compute:03d}]",
                "net": "o2ib",
                "nid": {"ip": "10.1.0.1"},
                "guid_base": guid("001175", 0x0C, 0),
            }
        ),
        "",
        "topology:",
        "  kind: fat-tree",
        "  fabric: wolf-ib",
        "  attach:",
        *[line for item in topo_attach for line in item],
        "",
        "# Rates: the slides expected ~55 GB/s from the 24 IO nodes, so 2.3 GB/s each; the",
        "# 12800-360 is QDR InfiniBand, whose data rate is an assumption here.  The invented",
        "# storage side has no rates: n/a.",
        *rates(
            None,
            "",
            {
                "fabric_link": (
                    "4 GB/s",
                    "assumption: InfiniBand 4x QDR data rate (32 Gbit/s), one way",
                ),
                "router": (
                    "2.3 GB/s",
                    "seed 002: ~55 GB/s expected from the 24 IO nodes (55 / 24)",
                ),
            },
        ),
        "fabrics:",
        "  - name: wolf-ib",
        "    role: compute",
        "    # the opensm line `lnetgen fabric check` printed (OpenSM 3.3.23 on ibsim); the guid",
        "    # files alone leave the busiest leaf uplink at 12x the best possible too",
        "    opensm: {io_guid_file: true, cn_guid_file: true, root_guid_file: true, max_reverse_hops: 1,"
        ' measured: "fabric check, OpenSM 3.3.23, fabric 2212f9d84334: busiest leaf uplink 1.00x'
        ' against 12.00x with no setting"}',
        "    switches:",
        f"      - name: {core}",
        "        kind: director",
        f"        guid: {scalar(guid('001175', 0x01, 1))}",
        "        spines: 18",
        "        spine_guids:",
        *[f"          - {scalar(guid('001175', 0x02, k))}" for k in range(1, 19)],
        "        leaves:",
        *[
            line
            for k in range(1, 37)
            for line in flow_item(
                {"name": f"L{k:02d}", "ports": 18, "uplinks": 18, "guid": guid("001175", 0x03, k)},
                indent=10,
            )
        ],
        "  - name: lustre-ib",
        "    role: storage",
        "    # no OpenSM setting: `lnetgen fabric check` measures the routes the plan uses at",
        "    # 1.00x the best possible with none (2.00x counting every router-server pair)",
        "    switches:",
        *storage_director("lbcore1"),
        *closing("lustre1", routers, servers),
    ]
    return lines


# ----------------------------------------------------------------------------- Slingshot

SLINGSHOT_HEADER = """
A routed HPE Slingshot compute side in front of an InfiniBand storage fabric: a reference site
of a shape the seeds do not cover.
Generated by sites/generate.py -- edit the script, not this file.

From the paper: nothing -- no seed paper describes a routed Slingshot site.
Assumptions and inventions (every size, chosen to be of a realistic shape and small enough to
test):
  - Compute side: a dragonfly of 8 groups x 16 switches, 16 host ports per switch (as in an
    HPE Cray EX switch blade), the 16 switches of a group linked all-to-all by one link each,
    each pair of groups by 32 global links.  Clients use the kfi LND (kfilnd, Lustre 2.15+).
  - 32 LNet routers, 4 per group, one on each of switches 3, 7, 11 and 15; lnetNN is in group
    (NN - 1) mod 8, so the 4 routers of a storage leaf sit in 4 different groups (a group lost
    takes one router of a leaf, not all four; a client reaches a leaf's net through its own
    group in half the groups and across a global link in the others).  Router NIDs are
    numbered from 10001 so they cannot collide with the clients' (the trailing number of
    nid000001-nid002016).  Compute nodes fill the other host ports in name order.
  - Storage side: one InfiniBand director (8 leaf modules of 18 host ports and 18 uplinks);
    leaves L01-L07 each hold 4 routers and 2 OSS (groups "4:2"), L08 holds 4 routers and the 2
    MDS of the one file system, scratch (14 OSS x 8 OSTs).
  - LNet Multi-Rail on the storage side: every router has a second HDR HCA (ib1, a rail on
    ports 7-10 of its leaf) and every OSS a second port (ib1, ports 11-12); the MDS have one.
  - Rates: the links' nominal signalling rates (Slingshot 200 Gbit/s, InfiniBand HDR 4x
    200 Gbit/s), not measurements.  Router, OSS and OST rates are not given: n/a, so every
    prediction on this site is a bound set by the links.
  - Host names, NIDs, IP addresses and GUIDs are invented.
"""

SS_GROUPS, SS_SWITCHES, SS_EDGE = 8, 16, 16
SS_ROUTER_SWITCHES = (3, 7, 11, 15)


def slingshot() -> list[str]:
    attach: list[list[str]] = []
    first = 1
    for g in range(SS_GROUPS):
        sw = 0
        for rs in SS_ROUTER_SWITCHES:
            # switches sw .. rs-1 full, then the router's switch with one port less
            full = (rs - sw) * SS_EDGE
            attach.append(
                flow_item(
                    {"nodes": f"nid[{first:06d}-{first + full - 1:06d}]", "group": g,
                     "switch": sw, "per_switch": SS_EDGE},
                    indent=4,
                )
            )  # fmt: skip
            first += full
            attach.append(
                flow_item(
                    {"nodes": f"nid[{first:06d}-{first + SS_EDGE - 2:06d}]", "group": g,
                     "switch": rs},
                    indent=4,
                )
            )  # fmt: skip
            first += SS_EDGE - 1
            sw = rs + 1
    n_clients = first - 1
    routers: list[list[str]] = []
    for i in range(1, SS_GROUPS * len(SS_ROUTER_SWITCHES) + 1):
        # router i sits in group (i - 1) % 8, so each leaf's 4 routers are in 4 groups
        k, g = divmod(i - 1, SS_GROUPS)
        leaf = (i - 1) // 4 + 1
        routers.append(
            block_item(
                {
                    "name": f"lnet{i:02d}",
                    "client": {"nid": f"{10000 + i}@kfi", "interface": "hsn0"},
                    "storage": {
                        "ip": ip("10.20.1.0", i),
                        "interface": "ib0",
                        "guid": guid("0002c9", 0x0A, i),
                    },
                    "attach": {"switch": "sib1", "leaf": f"L{leaf:02d}", "port": (i - 1) % 4 + 1},
                    "rails": [
                        {
                            "ip": ip("10.20.1.100", i),
                            "interface": "ib1",
                            "guid": guid("0002c9", 0x1A, i),
                            "attach": {
                                "switch": "sib1",
                                "leaf": f"L{leaf:02d}",
                                "port": 4 + 2 + (i - 1) % 4 + 1,
                            },
                        }
                    ],
                    "dragonfly": {"group": g, "switch": SS_ROUTER_SWITCHES[k]},
                }
            )
        )
    servers: list[list[str]] = []
    for i in range(1, 15):
        leaf = (i - 1) // 2 + 1
        servers.append(
            block_item(
                {
                    "name": f"scratch-oss{i:02d}",
                    "role": "oss",
                    "fs": "scratch",
                    "ip": ip("10.20.2.0", i),
                    "interface": "ib0",
                    "guid": guid("0002c9", 0x0B, i),
                    "attach": {
                        "switch": "sib1",
                        "leaf": f"L{leaf:02d}",
                        "port": 4 + (i - 1) % 2 + 1,
                    },
                    "osts": f"{8 * (i - 1)}-{8 * i - 1}",
                    "rails": [
                        {
                            "ip": ip("10.20.2.100", i),
                            "interface": "ib1",
                            "guid": guid("0002c9", 0x1B, i),
                            "attach": {
                                "switch": "sib1",
                                "leaf": f"L{leaf:02d}",
                                "port": 10 + (i - 1) % 2 + 1,
                            },
                        }
                    ],
                }
            )
        )
    for i in range(1, 3):
        servers.append(
            flow_item(
                {
                    "name": f"scratch-mds{i:02d}",
                    "role": "mds",
                    "fs": "scratch",
                    "ip": ip("10.20.3.0", i),
                    "interface": "ib0",
                    "guid": guid("0002c9", 0x0C, i),
                    "attach": {"switch": "sib1", "leaf": "L08", "port": 4 + i},
                    "mdts": f"{i - 1}",
                }
            )
        )
    slingshot_rate = "assumption: HPE Slingshot 200 Gbit/s nominal signalling rate, one way"
    hdr_rate = "assumption: InfiniBand HDR 4x nominal 200 Gbit/s, one way"
    lines = comment(SLINGSHOT_HEADER)
    lines += [
        "site: slingshot",
        "description: "
        + scalar(
            f"Routed Slingshot reference: {n_clients} kfi clients on an 8-group dragonfly, "
            "32 LNet routers, IB storage (sizes assumed)"
        ),
        "",
        "strategy:",
        "  default: nearest-neighbor",
        "  storage_lnd: o2ib",
        "  storage_net_base: 1",
        '  groups: {oss: "4:2", mds: "2:1", backup: balanced, backup_priority: 1}',
        "",
        'lustre: {version: "2.15.6"}',
        "",
        "client_nets:",
        "  - {name: kfi, interface: hsn0}",
        "",
        "clients:",
        *flow_item(
            {
                "name": "compute",
                "nodes": f"nid[000001-{n_clients:06d}]",
                "net": "kfi",
                "nid": "number",
            }
        ),
        "",
        "topology:",
        "  kind: dragonfly",
        f"  groups: {SS_GROUPS}",
        f"  switches_per_group: {SS_SWITCHES}",
        "  global_links: 32",
        "  local_links: 1",
        f"  edge_ports: {SS_EDGE}",
        "  attach:",
        *[line for item in attach for line in item],
        "",
        *rates(
            None,
            "",
            {
                "injection": ("25 GB/s", slingshot_rate),
                "local_link": ("25 GB/s", slingshot_rate),
                "global_link": ("25 GB/s", slingshot_rate),
                "ib_link": ("25 GB/s", hdr_rate),
                "uplink": ("25 GB/s", hdr_rate),
            },
        ),
        "fabrics:",
        "  - name: storage-ib",
        "    role: storage",
        "    switches:",
        *storage_director("sib1"),
        *closing("scratch", routers, servers),
    ]
    return lines


# ----------------------------------------------------------------------------- main

SITES: dict[str, Callable[[], list[str]]] = {
    "spider.yaml": spider,
    "bluewaters.yaml": bluewaters,
    "wolf.yaml": wolf,
    "slingshot.yaml": slingshot,
}


def render(name: str) -> str:
    """The full text of one generated inventory (``name`` is a key of ``SITES``)."""
    return "\n".join(SITES[name]()) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) > 1 or (argv and argv[0].startswith("-")):  # --help made a directory
        print("usage: generate.py [OUTPUT_DIR]", file=sys.stderr)
        return 2
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent
    out.mkdir(parents=True, exist_ok=True)
    for name in sorted(SITES):
        text = render(name)
        target = out / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            tmp = target.with_suffix(".yaml.tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
