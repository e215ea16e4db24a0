"""modprobe ``options lnet`` lines (legacy; still widely deployed).

Gateways are folded into kernel-valid ranges (``lnetgen.routestr``).  Linux caps a module
string parameter at 1024 bytes, so a longer ``routes=``/``networks=`` is never written:

* when the user named ``modprobe`` in ``--formats``, that is an error naming the class or host,
  the length and the YAML alternative;
* when modprobe is only part of the default set, the whole format is skipped for the site (no
  partial set of files) with a warning, and the routes live in ``lnetctl/`` YAML only.

Routers get ``forwarding="enabled"``, everything else ``forwarding="disabled"``.  Lustre 2.19.53
and later ignore ``routes=`` and ``forwarding=``; use the lnetctl YAML there.
"""

from __future__ import annotations

from lnetgen import routestr
from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.emit.base import Context, OutFile, render
from lnetgen.plan import Route

FORMAT = "modprobe"


def _kroutes(routes: tuple[Route, ...]) -> str:
    return routestr.format_routes(
        routestr.KRoute(r.net, r.gateway, r.hop, r.priority) for r in routes
    )


def emit(ctx: Context) -> list[OutFile]:
    plan = ctx.plan
    items: list[tuple[str, str, str, str, str, str]] = []  # name, role, hosts, nets, routes, fwd
    for cc in plan.client_classes:
        items.append(
            (
                cc.name,
                "client",
                cc.members,
                routestr.format_networks([(cc.net, cc.interface)]),
                _kroutes(cc.routes),
                "disabled",
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
                "enabled",
            )
        )
    server_routes = plan.routes_for_server()
    for s in plan.servers:
        items.append(
            (
                s.name,
                "server",
                s.name,
                routestr.format_networks([(net, s.interface) for net in s.networks]),
                _kroutes(server_routes.get(s.name, ())),
                "disabled",
            )
        )
    too_long = []
    for name, role, _hosts, nets, routes, _fwd in items:
        for param, value in (("routes", routes), ("networks", nets)):
            if not routestr.param_fits(value):
                too_long.append((name, role, param, len(value.encode())))
    if too_long:
        name, role, param, length = too_long[0]
        msg = (
            f"modprobe: {param}= for {role} {name} would be {length} bytes, over Linux's "
            f"{routestr.MODULE_PARAM_MAX}-byte limit for a module parameter"
            f"{f' ({len(too_long)} files affected)' if len(too_long) > 1 else ''}; "
            f"deploy the lnetctl YAML (lnetctl/{name}.yaml, /etc/lnet.conf) instead"
        )
        if ctx.explicit:
            raise InputError(
                [
                    Diagnostic(
                        ctx.site.file,
                        0,
                        0,
                        "error",
                        "E-MODPROBE-LENGTH",
                        "$",
                        msg + ", or leave modprobe out of --formats",
                    )
                ]
            )
        ctx.warnings.append(
            Diagnostic(
                ctx.site.file,
                0,
                0,
                "warning",
                "W-MODPROBE-SKIPPED",
                "$",
                msg + "; modprobe files were not written",
            )
        )
        return []
    return [
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
            ),
            FORMAT,
            hosts,
            role,
        )
        for name, role, hosts, nets, routes, fwd in items
    ]
