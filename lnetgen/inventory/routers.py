"""The ``routers`` section: LNet routers, each with a client side and a storage side.

Reads ``routers[]`` (``name``, ``client.nid``/``interface``/``guid``/``attach``, ``storage.ip``/
``interface``/``guid``, ``attach``, ``rails`` (``inventory.rails``), ``coords``, ``dragonfly``).
Reports E-ROUTER-IFACE (no interface on a client net or on the clients' fabric), E-TORUS-COORD,
W-COORDS-UNUSED, the dragonfly codes (``inventory.dragonfly``), the NID codes through ``lnet``
and the attachment codes through ``Fabrics.attach``; claims each router's name, NID, storage IP,
GUIDs and ports for the site-wide duplicate checks. Adds ``Site.routers``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lnetgen import nodes
from lnetgen.inventory.addresses import canonical_ip
from lnetgen.inventory.context import Context
from lnetgen.inventory.dragonfly import router_place
from lnetgen.inventory.fabrics import Fabrics
from lnetgen.inventory.lnet import read_nid
from lnetgen.inventory.nets import ClientNets
from lnetgen.inventory.rails import check_rails
from lnetgen.inventory.topology import Topology
from lnetgen.model import Attachment, Router, Torus
from lnetgen.yamlsrc import Path


@dataclass
class Routers:
    """What the later checks need from the routers section."""

    #: the routers that check out, each with its index in ``routers``
    routers: list[tuple[int, Router]] = field(default_factory=list)
    #: the storage-side leaf module of every attached router, usable or not
    modules: list[tuple[int, tuple[str, str]]] = field(default_factory=list)
    #: the client nets some router has a NID on
    nets: set[nodes.Net] = field(default_factory=set)


def check_routers(ctx: Context, fabrics: Fabrics, cnets: ClientNets, topo: Topology) -> Routers:
    out = Routers()
    for i, r in ctx.items("routers"):
        p: Path = ("routers", i)
        name = r["name"]
        ctx.host_name(name, (*p, "name"), "router")
        ip = canonical_ip(ctx, r["storage"]["ip"], (*p, "storage", "ip"))
        ctx.ips.claim(ip, (*p, "storage", "ip"), name)
        for side in ("storage", "client"):
            if "guid" in r[side]:
                ctx.guid(r[side]["guid"], (*p, side, "guid"), f"the {side} port of {name}")
        cnid = _client_nid(ctx, r, p, cnets, out.nets)
        coords, coords_ok = _coords(ctx, r, p, topo.torus)
        dfly, dfly_ok = router_place(ctx, r, p, topo.dragonfly)
        a = fabrics.attach(ctx, r["attach"], (*p, "attach"), "storage", name)
        if a is None:
            ctx.incomplete = True
        else:
            ctx.ports.claim(a, (*p, "attach"), name)
            out.modules.append((i, a.module))
        ca, ca_ok = _client_attach(ctx, r, p, fabrics, topo.fat_tree)
        rails, rails_ok = check_rails(ctx, fabrics, r, p, (ip, r["storage"]["interface"], a))
        if cnid is not None and coords_ok and dfly_ok and a is not None and ca_ok and rails_ok:
            router = Router(
                name,
                str(cnid),
                cnid.net,
                r["client"]["interface"],
                ip,
                r["storage"]["interface"],
                r["storage"].get("guid", ""),
                a,
                coords,
                r["client"].get("guid", ""),
                ca,
                dfly,
                rails,
            )
            out.routers.append((i, router))
    return out


def _client_nid(
    ctx: Context, r: dict[str, Any], p: Path, cnets: ClientNets, router_nets: set[nodes.Net]
) -> nodes.Nid | None:
    """The router's client NID, claimed; None when it is unusable (reported)."""
    nid_path: Path = (*p, "client", "nid")
    cnid = read_nid(ctx, r["client"]["nid"], nid_path)
    if cnid is None:
        return None
    ctx.nids.claim(str(cnid), nid_path, r["name"])
    router_nets.add(cnid.net)
    if cnid.net not in cnets.index and cnets.whole:
        known = ", ".join(str(c.net) for c in cnets.nets) or "none"
        ctx.err(
            nid_path,
            "E-ROUTER-IFACE",
            f"router {r['name']} has no interface on a client net: its client NID "
            f"is on {cnid.net}, which is not in client_nets ({known})",
        )
        return None
    return cnid


def _coords(
    ctx: Context, r: dict[str, Any], p: Path, torus: Torus | None
) -> tuple[tuple[int, int, int] | None, bool]:
    """The router's torus position, and whether it is usable (a problem is reported)."""
    name = r["name"]
    if torus is None:
        if "coords" in r:
            ctx.warn(
                (*p, "coords"),
                "W-COORDS-UNUSED",
                f"coords of {name} are ignored: the client side is not a torus",
            )
        return None, True
    if "coords" not in r:
        ctx.err(
            p,
            "E-TORUS-COORD",
            f"router {name} needs 'coords' [x, y, z]: the client side is a torus",
        )
        return None, False
    c = r["coords"]
    coords = (c[0], c[1], c[2])
    if any(v >= n for v, n in zip(coords, torus.dims, strict=True)):
        ctx.err(
            (*p, "coords"),
            "E-TORUS-COORD",
            f"{list(coords)} of {name} is outside the torus "
            f"{list(torus.dims)} (coordinates count from 0)",
        )
        return coords, False
    return coords, True


def _client_attach(
    ctx: Context, r: dict[str, Any], p: Path, fabrics: Fabrics, fat_tree: str | None
) -> tuple[Attachment | None, bool]:
    """The router's port on the compute fabric, and whether it is usable (a problem is reported).

    A fat-tree client side needs one, on the clients' fabric; elsewhere it is optional.
    """
    name = r["name"]
    if "attach" not in r["client"]:
        if fat_tree is None:
            return None, True
        ctx.err(
            (*p, "client"),
            "E-ROUTER-IFACE",
            f"router {name} has no port on the clients' fabric {fat_tree!r}: "
            "give client.attach {switch, leaf, port}",
        )
        return None, False
    path: Path = (*p, "client", "attach")
    ca = fabrics.attach(ctx, r["client"]["attach"], path, "compute", name)
    if ca is None:
        return None, False
    ctx.ports.claim(ca, path, name)
    if fat_tree is not None and fabrics.fabric_of(ca) != fat_tree:
        ctx.err(
            (*path, "switch"),
            "E-ROUTER-IFACE",
            f"router {name} is attached to {ca.switch} on fabric "
            f"{fabrics.fabric_of(ca)!r}, but the clients are on {fat_tree!r}",
        )
        return ca, False
    return ca, True
