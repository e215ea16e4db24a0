"""``rails`` of a router or server: LNet Multi-Rail ports on the storage fabric.

Reads ``routers[].rails[]`` and ``servers[].rails[]`` (``ip``, ``interface``, ``guid``,
``attach``).  Reports E-RAIL-LEAF (a rail cabled to another leaf module than the host's storage
port), E-RAIL-IFACE (an interface the host already uses: its storage port's, another rail's, a
router's client port's) and E-RAIL-ADDR (an
address of the other IP family than the host's storage address: both NIDs must be on one net);
the attachment codes through ``Fabrics.attach``; claims each rail's address, GUID and port for
the site-wide duplicate checks.  A router's client interface counts as one it already uses: a rail
is a port of its own, not the client port carrying a storage net too.

Decision: a rail must sit on the same leaf module as the host's first storage port.  lnetgen
puts a router in the storage net of its leaf's servers, and a server's clients reach it through
the routers of its leaf; a rail on another leaf would carry that net's traffic across the spine,
which is what fine-grained routing exists to avoid.
"""

from __future__ import annotations

from typing import Any

from lnetgen.inventory.addresses import canonical_ip
from lnetgen.inventory.context import Context
from lnetgen.inventory.fabrics import Fabrics
from lnetgen.model import Attachment, Rail
from lnetgen.yamlsrc import Path


def check_rails(
    ctx: Context,
    fabrics: Fabrics,
    spec: dict[str, Any],
    p: Path,
    first: tuple[str, str, Attachment | None],
) -> tuple[tuple[Rail, ...], bool]:
    """The rails of the host at ``p`` (``spec`` its inventory entry), whose first storage port
    is ``first`` = (address, interface, attachment or None when that is unusable); and whether
    they are all usable (each problem is reported)."""
    name = spec["name"]
    ip0, iface0, attach0 = first
    rails: list[Rail] = []
    ok = True
    seen = {iface0: "its storage port"}
    client = spec.get("client")
    if isinstance(client, dict) and client.get("interface"):
        seen.setdefault(str(client["interface"]), "its client port")
    for k, r in enumerate(spec.get("rails", ())):
        rp: Path = (*p, "rails", k)
        ip = canonical_ip(ctx, r["ip"], (*rp, "ip"))
        ctx.ips.claim(ip, (*rp, "ip"), name)
        if (":" in ip) != (":" in ip0):
            ctx.err(
                (*rp, "ip"),
                "E-RAIL-ADDR",
                f"rail {k + 1} of {name} has address {ip} but its storage port has {ip0}: "
                "both NIs are on one LNet net, so both addresses must be IPv4 or both IPv6",
            )
            ok = False
        iface = r["interface"]
        if iface in seen:
            ctx.err(
                (*rp, "interface"),
                "E-RAIL-IFACE",
                f"rail {k + 1} of {name} uses interface {iface}, already used by "
                f"{seen[iface]}: every rail is its own interface",
            )
            ok = False
        seen.setdefault(iface, f"rail {k + 1}")
        if "guid" in r:
            ctx.guid(r["guid"], (*rp, "guid"), f"rail {k + 1} of {name}")
        a = fabrics.attach(ctx, r["attach"], (*rp, "attach"), "storage", name)
        if a is None:
            ok = False
            continue
        ctx.ports.claim(a, (*rp, "attach"), name)
        if attach0 is not None and a.module != attach0.module:
            ctx.err(
                (*rp, "attach"),
                "E-RAIL-LEAF",
                f"rail {k + 1} of {name} is cabled to {a.label()}, its storage port to "
                f"{attach0.label()}: a rail must be on the same leaf module, or the net's "
                "traffic would cross the spine",
            )
            ok = False
        rails.append(Rail(ip, iface, r.get("guid", ""), a))
    return tuple(rails), ok
