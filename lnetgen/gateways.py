"""Before the guarantee proof: does every storage net of a layout have a priority-0 router on
every client net with clients (``gateway_problems``)?  ``lnetgen.solve`` raises its findings
before it builds the plan, so a missing router is named at its leaf instead of as the coverage
failures it leads to."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic
from lnetgen.model import Site
from lnetgen.strategies import NetSpec
from lnetgen.strategies.base import label


def gateway_problems(
    site: Site, strategy: str, specs: list[NetSpec], net_names: list[str]
) -> list[Diagnostic]:
    """The storage nets of the layout that no priority-0 router serves from a client net with
    clients: those clients could not reach the nets' servers.  One error per leaf module (or
    N:M group) and client net.

    What an administrator expects: the cause named where it lies, not the coverage failures it
    leads to (``class clients-tcp has no priority-0 route to o2ib3``, ``servers oss03 have no
    route to tcp``, at no line of the inventory).  A fine-grained layout hands a leaf module's
    nets only to the routers on that leaf, so a leaf that holds servers needs a router on
    *every* client net with clients, not just any router (the inventory's E-LEAF-NO-ROUTER):
    a tcp login net served by one router on L01 reaches the servers of L01 only.  Which
    strategies need it follows from each one's design, not from a list: baseline gives each
    fabric's net all the fabric's routers, so it needs one router per client net on the fabric
    (told as a coverage failure naming the fabric); groups needs one in each N:M group (a leaf
    with tcp routers whose group got none is told so).  The leaf is named first (``leaf
    core1/L02``, ``group core1/L02#3``) so that ``lnetgen.drysolve.locate`` puts the error at
    the first server on that leaf, as the inventory's E-LEAF-NO-ROUTER."""
    clients = site.clients
    counts = np.bincount(clients.net_index, minlength=len(clients.nets)).tolist()
    on_leaf: dict[tuple[str, str], set[str]] = defaultdict(set)  # (leaf, client net) -> routers
    for r in site.routers:
        on_leaf[(label(r.attach.module), str(r.client_net))].add(r.name)
    # (where, client net) -> servers, storage nets; in layout order
    lacking: dict[tuple[str, str, int], tuple[list[str], list[str]]] = {}
    for spec, net in zip(specs, net_names, strict=True):
        have = {str(r.client_net) for r in spec.routers}
        for k, cnet in enumerate(str(n) for n in clients.nets):
            if not counts[k] or cnet in have:
                continue
            if spec.module is None:
                fabric = spec.servers[0].fabric if spec.servers else ""
                where = f"fabric {fabric}"
            else:
                leaf = label(spec.module)
                where = f"leaf {leaf}"
                if on_leaf.get((leaf, cnet)):
                    where = f"group {spec.group} of leaf {leaf}"
            srv, nets = lacking.setdefault((where, cnet, k), ([], []))
            srv += [s.name for s in spec.servers]
            nets.append(net)
    out: list[Diagnostic] = []
    for (where, cnet, ki), (srv, nets) in lacking.items():
        ids = np.nonzero(clients.net_index == ki)[0]
        who = f"the {len(ids)} client(s) on {cnet} ({nodes.fold(clients.names[i] for i in ids)})"
        held = f"{nodes.fold(srv)} on storage net(s) {', '.join(nets)}"
        path = "$"
        if where.startswith("fabric"):
            code, hint = "E-GUARANTEE", f"give the fabric a router on {cnet}"
            fabrics = [f.name for f in site.fabrics]
            if where.split()[-1] in fabrics:
                path = f"$.fabrics[{fabrics.index(where.split()[-1])}]"
            msg = f"coverage: {where} has no router on client net {cnet}: {who} cannot reach {held}"
        else:
            code = "E-LEAF-NO-ROUTER"
            leaf = where.split()[-1]
            theirs = sorted(on_leaf.get((leaf, cnet), ()))
            msg = (
                f"{where} holds servers ({held}) but no router on client net {cnet}: "
                f"strategy {strategy} routes {who} to them only through routers of that "
                + ("group" if theirs else "leaf")
            )
            if theirs:
                msg += f" (the leaf's routers on {cnet}, {nodes.fold(theirs)}, serve other groups)"
            hint = f"attach a router with a client interface on {cnet} to {leaf}" + (
                ", or solve with a strategy that routes across leaves (baseline)"
                if strategy != "baseline"
                else ""
            )
        out.append(Diagnostic(site.file, 0, 0, "error", code, path, msg, hint))
    return out
