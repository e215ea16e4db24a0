"""modprobe ``options lnet`` lines (legacy; still widely deployed).

Gateways are folded into kernel-valid ranges (``lnetgen.routestr``).  Linux caps a module
string parameter at 1024 bytes, so a longer ``routes=``/``networks=`` is never written:

* when the user named ``modprobe`` in ``--formats``, that is an error naming the class or host,
  the length and the YAML alternative;
* when modprobe is only part of the default set, the whole format is skipped for the site (no
  partial set of files) with a warning, and the routes live in ``lnetctl/`` YAML only.

Routers get ``forwarding="enabled"``, everything else ``forwarding="disabled"``.  The
inventory's tunables follow on the ``options lnet`` line (``lnet_drop_asym_route=1`` when the
plan's symmetry is proven), and per-NI ones on an ``options <LND module>`` line.  Lustre 2.19.53
and later ignore ``routes=`` and ``forwarding=``; use the lnetctl YAML there.

A client class's ``routes=`` is made from its route sets (``Plan.route_sets``), each formatted
once; the length check runs on these strings before any file is rendered.
"""

from __future__ import annotations

from collections.abc import Iterator

from lnetgen import routestr
from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.emit.base import Context, OutFile, render
from lnetgen.emit.hostpath import finding, host_path, members_path
from lnetgen.model import Site
from lnetgen.plan import Plan, Route
from lnetgen.target import KERNEL_ROUTES_REMOVED, ROLES, Targets, show
from lnetgen.tunables import host_settings
from lnetgen.yamlsrc import Path

FORMAT = "modprobe"


def _kroutes(routes: tuple[Route, ...]) -> str:
    return routestr.format_routes(
        routestr.KRoute(r.net, r.gateway, r.hop, r.priority) for r in routes
    )


def class_routes(plan: Plan) -> list[str]:
    """Each client class's ``routes=`` string, in ``plan.client_classes`` order: the texts of
    its route sets, each formatted once, joined in ``format_routes``'s statement order (the
    whole table is formatted instead when a net comes back in two sets, or the text is so long
    that ``format_routes`` would split statements)."""
    sets, class_sets = plan.route_sets
    texts = [_kroutes(rs.routes) for rs in sets]
    order = [routestr.statement_order(rs.net) for rs in sets]
    out = []
    for cc, idx in zip(plan.client_classes, class_sets, strict=True):
        parts = sorted((i for i in idx if texts[i]), key=order.__getitem__)
        text = "; ".join(texts[i] for i in parts)
        if len({sets[i].net for i in parts}) != len(parts) or len(text) > _JOIN_MAX:
            text = _kroutes(cc.routes)
        out.append(text)
    return out


#: Above this length a joined ``routes=`` is formatted whole (``format_routes`` splits
#: statements near the kernel's text buffer budget); far above the module parameter limit.
_JOIN_MAX = routestr.TEXTBUF_BUDGET // 2


def too_long(ctx: Context) -> str | None:
    """Why the modprobe files cannot be written for this site (an IPv6 gateway, a ``routes=``
    or ``networks=`` over the module parameter limit), or None."""
    found = _cannot(ctx)
    return found[1] if found else None


def skipped(ctx: Context) -> Diagnostic | None:
    """Why no modprobe file is written, as ``generate`` says it: an error (E-MODPROBE-IPV6,
    E-MODPROBE-LENGTH) when modprobe was named in ``--formats`` (``ctx.explicit``), else the
    warning W-MODPROBE-SKIPPED; located at the inventory entry that causes it (the router with
    the IPv6 address, the host or client group whose line is too long).  None: it is written.
    ``lnetgen validate`` gives the same warning for the default strategy
    (``lnetgen.emit.findings``)."""
    found = _cannot(ctx)
    if found is None:
        return None
    path, msg, code = found
    if ctx.explicit:
        return finding(ctx.site, path, "error", code, msg + ", or leave modprobe out of --formats")
    return finding(
        ctx.site, path, "warning", "W-MODPROBE-SKIPPED", msg + "; modprobe files were not written"
    )


def _cannot(ctx: Context) -> tuple[Path, str, str] | None:
    """(where, why, error code) when the modprobe files cannot be written."""
    v6 = _ipv6_gateway(ctx.plan, ctx.site.lustre)
    if v6:
        router = _gateway_router(ctx.site, v6[0])
        return router, v6[1], "E-MODPROBE-IPV6"
    items = _items(ctx.plan, ctx.site.lustre)
    problems = _too_long(items)
    if not problems:
        return None
    name, role = problems[0][0], problems[0][1]
    if role == "client":
        members = next(hosts for n, r, hosts, *_ in items if n == name and r == role)
        where = members_path(ctx.site, members)
    else:
        where = host_path(ctx.site, name)
    return where, _message(problems), "E-MODPROBE-LENGTH"


def ipv6_gateway(plan: Plan, lustre: Targets) -> str | None:
    """Why no ``routes=`` can be written: a gateway with an IPv6 address, which the kernel's
    grammar cannot carry (``:`` separates a gateway's priority), or None.  Only the routes of a
    role whose release still parses ``routes=`` count: the others get ``networks=`` and tunables
    alone, which carry no gateway."""
    found = _ipv6_gateway(plan, lustre)
    return found[1] if found else None


def _ipv6_gateway(plan: Plan, lustre: Targets) -> tuple[str, str] | None:
    """(the gateway NID, why) for ``ipv6_gateway``."""
    tables = [cc.routes for cc in plan.client_classes] if lustre.kernel_routes("client") else []
    if lustre.kernel_routes("server"):
        tables += [s.routes for s in plan.server_routes]
    for routes in tables:
        for r in routes:
            if ":" in r.gateway.rpartition("@")[0]:
                return r.gateway, (
                    f"modprobe: gateway {r.gateway} is IPv6, which the kernel's routes= grammar "
                    "cannot carry (':' separates a gateway's priority); deploy the lnetctl YAML "
                    "(/etc/lnet.conf) instead"
                )
    return None


def _gateway_router(site: Site, gateway: str) -> Path:
    """The inventory entry of the router whose NID ``gateway`` is."""
    addr = gateway.rpartition("@")[0]
    for i, r in enumerate(site.routers):
        if addr == r.client_nid.rpartition("@")[0]:
            return ("routers", i, "client")
        for k, port in enumerate(r.storage_ports):
            if addr == port.ip:
                return ("routers", i, "storage") if k == 0 else ("routers", i, "rails", k - 1)
    return ()


def target_warning(lustre: Targets) -> tuple[str, str] | None:
    """(the first role, message) of W-MODPROBE-TARGET: roles whose release no longer parses
    ``routes=`` get modprobe files without routes.  An inventory finding (it follows from
    ``lustre:`` alone), reported by the inventory check at the release that decides it
    (``lnetgen.inventory.output``), so ``validate`` gives it and every command says it once."""
    modern = [r for r in ROLES if not lustre.kernel_routes(r)]
    if not modern:
        return None
    return modern[0], (
        f"modprobe: {', '.join(r + 's' for r in modern)} run Lustre "
        f"{show(KERNEL_ROUTES_REMOVED)} or later, which no longer parses routes= or "
        "forwarding=: their modprobe files carry networks= and tunables only, and "
        "their routes and routing come from lnetctl/ (/etc/lnet.conf, lnet.service)"
    )


def _items(plan: Plan, lustre: Targets) -> list[tuple[str, str, str, str, str, str]]:
    """name, role, hosts, networks=, routes=, forwarding= of every file; ``routes=`` and
    ``forwarding=`` empty (not written, not even formatted: its gateways may be ones the
    grammar cannot carry, e.g. IPv6) for a role whose release no longer parses them."""
    k = {role: lustre.kernel_routes(role) for role in ROLES}
    items: list[tuple[str, str, str, str, str, str]] = []
    n = len(plan.client_classes)
    kclass = class_routes(plan) if k["client"] else [""] * n
    for cc, kroutes in zip(plan.client_classes, kclass, strict=True):
        items.append(
            (
                cc.name,
                "client",
                cc.members,
                routestr.format_networks([(cc.net, cc.interface)]),
                kroutes,
                "disabled" if k["client"] else "",
            )
        )
    for r in plan.routers:
        items.append(
            (
                r.name,
                "router",
                r.name,
                routestr.format_networks([(i.net, i.interface) for i in r.interfaces]),
                "",
                "enabled" if k["router"] else "",
            )
        )
    server_routes = plan.routes_for_server()
    for s in plan.servers:
        items.append(
            (
                s.name,
                "server",
                s.name,
                routestr.format_networks([(i.net, i.interface) for i in s.interfaces]),
                _kroutes(server_routes.get(s.name, ())) if k["server"] else "",
                "disabled" if k["server"] else "",
            )
        )
    return items


def _too_long(
    items: list[tuple[str, str, str, str, str, str]],
) -> list[tuple[str, str, str, int]]:
    out = []
    for name, role, _hosts, nets, routes, _fwd in items:
        for param, value in (("routes", routes), ("networks", nets)):
            if not routestr.param_fits(value):
                out.append((name, role, param, len(value.encode())))
    return out


def _message(too_long: list[tuple[str, str, str, int]]) -> str:
    name, role, param, length = too_long[0]
    return (
        f"modprobe: {param}= for {role} {name} would be {length} bytes, over Linux's "
        f"{routestr.MODULE_PARAM_MAX}-byte limit for a module parameter"
        f"{f' ({len(too_long)} files affected)' if len(too_long) > 1 else ''}; "
        f"deploy the lnetctl YAML (lnetctl/{name}.yaml, /etc/lnet.conf) instead"
    )


def emit(ctx: Context) -> Iterator[OutFile]:
    why = skipped(ctx)
    if why is not None:
        if ctx.explicit:
            raise InputError([why])
        ctx.warnings.append(why)
        return
    items = _items(ctx.plan, ctx.site.lustre)
    for name, role, hosts, nets, routes, fwd in items:
        tun = host_settings(
            ctx.site, role, [n for n, _ in routestr.parse_networks(nets)], ctx.symmetric
        )
        yield (
            OutFile(
                f"modprobe/{name}.conf",
                render(
                    "modprobe.conf.j2",
                    header=ctx.header,
                    role=role,
                    hosts=hosts,
                    networks=nets,
                    routes=routes,
                    forwarding=fwd,
                    options=tun.lnet_options(),
                    lnd_options=tun.lnd_options(),
                ),
                FORMAT,
                hosts,
                role,
            )
        )
