"""The ``servers`` section: the MDS and OSS nodes of each file system.

Reads ``servers[]`` (``name``, ``role``, ``fs``, ``ip``, ``interface``, ``guid``, ``osts``,
``mdts``, ``failover``, ``attach``, ``rails`` (``inventory.rails``)).  Reports E-FS-UNKNOWN,
E-OSTS, E-DUP-OST, E-MDTS and E-DUP-MDT here (the failover partner is checked by ``lustre``),
the attachment codes through ``Fabrics.attach``, and claims the name, storage IP, GUID and switch
port of each server for the site-wide duplicate checks.  Adds ``Site.servers``.
"""

from __future__ import annotations

from typing import Any

from lnetgen import nodes
from lnetgen.inventory.addresses import canonical_ip
from lnetgen.inventory.context import Context
from lnetgen.inventory.fabrics import Fabrics
from lnetgen.inventory.messages import did_you_mean
from lnetgen.inventory.rails import check_rails
from lnetgen.model import Server
from lnetgen.yamlsrc import Path


def check_servers(ctx: Context, fabrics: Fabrics, fs_names: set[str]) -> list[tuple[int, Server]]:
    """The servers that check out, each with its index in ``servers``."""
    out: list[tuple[int, Server]] = []
    ost_owner: dict[tuple[str, int], tuple[str, Path]] = {}
    mdt_owner: dict[tuple[str, int], tuple[str, Path]] = {}
    mds_seen: dict[str, int] = {}  # file system -> MDS read so far (default MDT indices)
    for i, s in ctx.items("servers"):
        p: Path = ("servers", i)
        name = s["name"]
        ctx.host_name(name, (*p, "name"), "server")
        ip = canonical_ip(ctx, s["ip"], (*p, "ip"))
        ctx.ips.claim(ip, (*p, "ip"), name)
        if "guid" in s:
            ctx.guid(s["guid"], (*p, "guid"), name)
        if s["fs"] not in fs_names:
            ctx.err(
                (*p, "fs"),
                "E-FS-UNKNOWN",
                f"file system {s['fs']!r} of {name} is not in 'filesystems'",
                hint=did_you_mean(s["fs"], fs_names),
            )
        osts = _osts(ctx, s, p)
        for o in osts:
            key = (s["fs"], o)
            if key in ost_owner:
                owner, op = ost_owner[key]
                ctx.err(
                    (*p, "osts"),
                    "E-DUP-OST",
                    f"OST index {o} of {s['fs']} is served by {name} and by {owner} "
                    f"(line {ctx.line(op)})",
                )
                break
            ost_owner[key] = (name, (*p, "osts"))
        mdts = _mdts(ctx, s, p, mds_seen)
        for o in mdts:
            key = (s["fs"], o)
            if key in mdt_owner:
                owner, op = mdt_owner[key]
                ctx.err(
                    (*p, "mdts"),
                    "E-DUP-MDT",
                    f"MDT index {o} of {s['fs']} is served by {name} and by {owner} "
                    f"(line {ctx.line(op)})",
                )
                break
            mdt_owner[key] = (name, (*p, "mdts"))
        a = fabrics.attach(ctx, s["attach"], (*p, "attach"), "storage", name)
        if a is not None:
            ctx.ports.claim(a, (*p, "attach"), name)
        rails, rails_ok = check_rails(ctx, fabrics, s, p, (ip, s["interface"], a))
        if a is None or not rails_ok:
            ctx.incomplete = True
            continue
        server = Server(
            name,
            s["role"],
            s["fs"],
            ip,
            s["interface"],
            s.get("guid", ""),
            a,
            osts,
            mdts,
            s.get("failover", ""),
            fabrics.fabric_of(a),
            rails,
        )
        out.append((i, server))
    return out


def _mdts(ctx: Context, s: dict[str, Any], p: Path, seen: dict[str, int]) -> tuple[int, ...]:
    """The MDT indices of an MDS: ``mdts`` (a list or range text), else one MDT whose index is
    the MDS's position among its file system's MDS in inventory order (0, 1, ...)."""
    if s["role"] != "mds":
        if "mdts" in s:
            ctx.err(
                (*p, "mdts"), "E-MDTS", f"{s['name']} is an {s['role']}; only an MDS holds MDTs"
            )
        return ()
    k = seen.get(s["fs"], 0)
    seen[s["fs"]] = k + 1
    if "mdts" not in s:
        return (k,)
    return _indices(ctx, s["mdts"], (*p, "mdts"), "E-MDTS", "MDT")


def _osts(ctx: Context, s: dict[str, Any], p: Path) -> tuple[int, ...]:
    """The OST indices of an OSS, from a list or a range text such as "0-3,8"."""
    if "osts" not in s:
        return ()
    if s["role"] != "oss":
        ctx.err((*p, "osts"), "E-OSTS", f"{s['name']} is an {s['role']}; only an OSS holds OSTs")
        return ()
    return _indices(ctx, s["osts"], (*p, "osts"), "E-OSTS", "OST")


def _indices(ctx: Context, raw: Any, p: Path, code: str, what: str) -> tuple[int, ...]:
    """Target indices from a list or a range text such as "0-3,8"."""
    if not isinstance(raw, str):
        return tuple(sorted(set(raw)))
    for part in raw.split(","):
        lo, _, hi = part.partition("-")
        if hi and int(lo) > int(hi):
            ctx.err(p, code, f"{what} range {part} runs backwards")
            return ()
        if int(hi or lo) > 65535:
            ctx.err(p, code, f"{what} index {int(hi or lo)} is outside 0-65535")
            return ()
    try:
        return tuple(sorted(set(nodes.parse_intset(raw))))
    except nodes.NodeSyntaxError as exc:
        ctx.err(p, code, str(exc))
        return ()
