"""Synthetic site inventories for scale benchmarks.

``python bench/synth.py --clients 100000 --routers 800 --out site.yaml [--topology fat-tree]``

Torus sites: a near-cubic 3-D torus with two nodes per chip and routers spread evenly over it;
fat-tree sites: an InfiniBand compute fabric of 18-port leaves, 16 clients per leaf on ports
3-18 and routers (IO nodes) dealt over the leaves on ports 1-2.  The storage side is director
switches of 24 leaf modules, each with 4 routers + 3 OSS (Cray 4:3 groups), so every strategy
solves.  Output is deterministic.
"""

from __future__ import annotations

import argparse
import math
import sys


def _dims(slots_needed: int, per_chip: int) -> tuple[int, int, int]:
    chips = math.ceil(slots_needed * 1.05 / per_chip)
    side = max(2, round(chips ** (1 / 3)))
    x = y = side
    z = max(2, math.ceil(chips / (x * y)))
    return x, y, z


def _leaf(i: int, count: int) -> str:
    """Name of leaf ``i`` (0-based) of a director with ``count`` leaves, as the inventory
    derives it from ``leaves: {count, prefix: L}``."""
    return f"L{i + 1:0{max(2, len(str(count)))}d}"


def synth(clients: int, routers: int, topology: str = "torus") -> str:
    """YAML text of a synthetic site with ``clients`` clients and ``routers`` routers
    (rounded up to a multiple of 4; 3 OSS per 4 routers, and one MDS)."""
    routers = max(4, 4 * math.ceil(routers / 4))
    leaves = routers // 4
    servers = leaves * 3
    switches = math.ceil((leaves + 1) / 24)
    routers += 2  # the MDS's two, on the leaf after the OSS groups
    w = []
    w.append(f"# synthetic site: {clients} clients, {routers} routers, {servers} OSS ({topology})")
    w.append(f"site: synth-{clients}")
    w.append("strategy: {default: groups, storage_lnd: o2ib, storage_net_base: 100,")
    w.append('           groups: {oss: "4:3", backup: next}}')
    pad = len(str(clients))
    if topology == "torus":
        w.append("client_nets:\n  - {name: gni, interface: ipogif0}")
        w.append(
            f'clients:\n  - {{name: compute, nodes: "nid[{1:0{pad}d}-{clients:0{pad}d}]", '
            "net: gni, nid: number}"
        )
        x, y, z = _dims(clients + routers, 2)
        w.append(
            f"topology: {{kind: torus, dims: [{x}, {y}, {z}], nodes_per_chip: 2, routing: xyz}}"
        )
        chips = x * y * z
        coords = []
        for j in range(routers):
            c = (j * chips) // routers
            coords.append((c % x, (c // x) % y, c // (x * y)))
    else:
        host_leaves = math.ceil(clients / 16)
        dir_leaves = host_leaves + 1
        w.append("client_nets:\n  - {name: o2ib, interface: ib0}")
        w.append(
            f'clients:\n  - {{name: compute, nodes: "cn[{1:0{pad}d}-{clients:0{pad}d}]", '
            'net: o2ib, nid: {ip: 10.128.0.1}, guid_base: "0x0011750c00000000"}'
        )
        w.append("topology:\n  kind: fat-tree\n  fabric: compute-ib\n  attach:")
        per_leaf = math.ceil(clients / host_leaves)
        start = 1
        for leaf in range(host_leaves):
            stop = min(clients, start + per_leaf - 1)
            if start > stop:
                break
            w.append(
                f'    - {{nodes: "cn[{start:0{pad}d}-{stop:0{pad}d}]", switch: cdir, '
                f"leaf: {_leaf(leaf, dir_leaves)}, first_port: 3}}"
            )
            start = stop + 1
        coords = []
    dir_leaves = math.ceil(clients / 16) + 1
    w.append("fabrics:")
    if topology != "torus":
        w.append("  - name: compute-ib\n    role: compute\n    switches:")
        w.append(
            f"      - {{name: cdir, kind: director, spines: 18, leaves: {{count: "
            f"{dir_leaves}, prefix: L, ports: 18, "
            "uplinks: 18}}"
        )
    w.append("  - name: storage-ib\n    role: storage\n    switches:")
    for s in range(switches):
        w.append(
            f"      - {{name: core{s + 1}, kind: director, spines: 12, "
            "leaves: {count: 24, prefix: L, ports: 12, uplinks: 12}}"
        )
    w.append("filesystems:\n  - {name: synth}")
    w.append("routers:")
    for j in range(routers):
        leaf = j // 4
        sw, lf = leaf // 24 + 1, leaf % 24 + 1  # the last two: the MDS leaf
        ip = f"10.{100 + j // 62500}.{(j // 250) % 250}.{j % 250 + 1}"
        if topology == "torus":
            cx, cy, cz = coords[j]
            client = f'{{nid: "{clients + 1000 + j}@gni", interface: ipogif0}}'
            extra = f", coords: [{cx}, {cy}, {cz}]"
        else:
            cip = f"10.200.{j // 250}.{j % 250 + 1}"
            port = 1 + (j // dir_leaves) % 2  # clients use ports 3-18 of each leaf
            client = (
                f'{{nid: "{cip}@o2ib", interface: ib0, '
                f'guid: "0x0011750d{j:08x}", attach: {{switch: cdir, '
                f"leaf: {_leaf(j % dir_leaves, dir_leaves)}, "
                f"port: {port}}}}}"
            )
            extra = ""
        w.append(
            f"  - {{name: rtr{j + 1:05d}, client: {client},\n"
            f'     storage: {{ip: {ip}, interface: ib0, guid: "0x0002c9030a{j:06x}"}},\n'
            f"     attach: {{switch: core{sw}, leaf: L{lf:02d}, port: {j % 4 + 1}}}{extra}}}"
        )
    w.append("servers:")
    for k in range(servers):
        leaf = k // 3
        sw, lf = leaf // 24 + 1, leaf % 24 + 1
        ip = f"10.{150 + k // 62500}.{(k // 250) % 250}.{k % 250 + 1}"
        w.append(
            f"  - {{name: oss{k + 1:05d}, role: oss, fs: synth, ip: {ip}, interface: ib0, "
            f'guid: "0x0002c9030b{k:06x}",\n'
            f"     attach: {{switch: core{sw}, leaf: L{lf:02d}, port: {k % 3 + 5}}}, "
            f'osts: "{4 * k}-{4 * k + 3}"}}'
        )
    # the file system's MDS (a file system without one cannot start), with its 2:1 group's
    # two routers on the next leaf
    sw, lf = leaves // 24 + 1, leaves % 24 + 1
    w.append(
        "  - {name: mds00001, role: mds, fs: synth, ip: 10.149.0.1, interface: ib0, "
        'guid: "0x0002c9030c000000",\n'
        f"     attach: {{switch: core{sw}, leaf: L{lf:02d}, port: 5}}}}"
    )
    return "\n".join(w) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, required=True)
    ap.add_argument("--routers", type=int, default=0, help="default: clients / 128")
    ap.add_argument("--topology", choices=["torus", "fat-tree"], default="torus")
    ap.add_argument("--out", default="-")
    args = ap.parse_args(argv)
    text = synth(args.clients, args.routers or max(4, args.clients // 128), args.topology)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
