"""Test helper for ``lnetgen verify``: hand-built trees.

Trees written by the current emitters have no ``filesystems`` manifest section; this helper
derives one from the tree's plan.json (tests may read the plan; the product never does) and,
when asked, gives every server an NI on one shared server net, as the deployable layout will.
Nothing here is used by the product: a manifest without ``filesystems`` is refused there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SERVER_NET = "o2ib"


def _add_net_yaml(text: str, net: str, iface: str) -> str:
    block = (
        f"    - net type: {net}\n"
        "      local NI(s):\n"
        "        - interfaces:\n"
        f"              0: {iface}\n"
    )
    at = text.find("\nroute:")
    return text + block if at < 0 else text[: at + 1] + block + text[at + 1 :]


def _add_net_modprobe(text: str, net: str, iface: str) -> str:
    return re.sub(r'networks="([^"]*)"', rf'networks="\1,{net}({iface})"', text, count=1)


def add_filesystems(tree: Path, server_net: str | None = SERVER_NET) -> dict[str, Any]:
    """Write the contract's ``filesystems``/``server_nets`` sections (and each file's ``fs``)
    into ``tree``'s manifest unless it has them; with ``server_net``, give every server an NI
    on that net in its lnetctl and modprobe files.  Returns the manifest."""
    mpath = tree / "manifest.json"
    manifest: dict[str, Any] = json.loads(mpath.read_text())
    if "filesystems" in manifest:
        return manifest
    plan = json.loads((tree / "plan.json").read_text())
    servers = sorted(plan["servers"], key=lambda s: s["name"])
    fs_names = sorted({s["fs"] for s in servers})
    filesystems: dict[str, Any] = {}
    for fs in fs_names:
        mine = [s for s in servers if s["fs"] == fs]
        mgs = next(s for s in mine if s["role"] == "mds")
        mgs_nid = mgs["nid"]
        entries = []
        ost = 0
        for s in mine:
            nids = [s["nid"]]
            if server_net:
                nids.append(f"{s['nid'].rpartition('@')[0]}@{server_net}")
            kind = "ost" if s["role"] == "oss" else "mdt"
            index = ost if kind == "ost" else 0
            ost += kind == "ost"
            name = f"{fs}-{kind.upper()}{index:04x}"
            mkfs = (
                f"mkfs.lustre --{kind} --fsname={fs} --index={index} --mgsnode={mgs_nid} "
                f"--servicenode={s['nid']} /dev/sdb"
            )
            if s is mgs:
                mkfs = mkfs.replace(" --mgsnode", " --mgs --mgsnode")
            entries.append(
                {
                    "name": s["name"],
                    "role": s["role"],
                    "mgs": s is mgs,
                    "nids": nids,
                    "client_nids": [s["nid"]],
                    "failover": None,
                    "targets": [{"name": name, "index": index, "kind": kind, "mkfs": mkfs}],
                }
            )
        filesystems[fs] = {
            "mgs": mgs["name"],
            "mgs_nids": [mgs_nid],
            "mount": f"{mgs_nid}:/{fs}",
            "servers": entries,
        }
    by_name = {s["name"]: s for s in servers}
    for f in manifest["files"]:
        host = by_name.get(f["hosts"])
        f["fs"] = [host["fs"]] if host is not None and f["role"] == "server" else fs_names
        if server_net and host is not None and f["role"] == "server":
            path = tree / f["path"]
            if f["format"] == "lnetctl":
                path.write_text(_add_net_yaml(path.read_text(), server_net, host["interface"]))
            elif f["format"] == "modprobe":
                text = _add_net_modprobe(path.read_text(), server_net, host["interface"])
                path.write_text(text)
    manifest["filesystems"] = filesystems
    manifest["server_nets"] = {"storage": server_net} if server_net else {}
    mpath.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest
