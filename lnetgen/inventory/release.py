"""The ``lustre:`` section: the Lustre release of the site's hosts (``lnetgen.target``).

``version`` for every host, ``client``/``router``/``server`` where a role differs.  Reports
E-LUSTRE-VERSION for a release lnetgen does not write for (before 2.12) and W-LUSTRE-MIXED
when routers run a release that still needs module-parameter routes while their clients or
servers do not, or the reverse (a rolling upgrade: the two halves load LNet differently);
E-LUSTRE-UDSP when ``udsp: true`` asks for UDSP rules on clients older than 2.15.
Adds ``Site.lustre``.
"""

from __future__ import annotations

from lnetgen.inventory.context import Context
from lnetgen.target import (
    KERNEL_ROUTES_REMOVED,
    NO_TARGETS,
    OLDEST,
    ROLES,
    UDSP_SINCE,
    Targets,
    parse_version,
    show,
    targets,
)


def check_release(ctx: Context) -> Targets:
    spec = ctx.data.get("lustre")
    if not isinstance(spec, dict) or "version" not in spec:
        return NO_TARGETS
    bad = False
    for key in ("version", *ROLES):
        if key not in spec:
            continue
        try:
            v = parse_version(str(spec[key]))
        except ValueError as exc:  # the schema's pattern says so too; keep one message
            ctx.err(("lustre", key), "E-LUSTRE-VERSION", str(exc))
            bad = True
            continue
        if v < OLDEST:
            ctx.err(
                ("lustre", key),
                "E-LUSTRE-VERSION",
                f"Lustre {show(v)}: lnetgen writes for {show(OLDEST)} and later",
                hint="upgrade first, or leave the release out to get both paths written",
            )
            bad = True
    if bad:
        return NO_TARGETS
    udsp = spec.get("udsp") is True
    got = targets({k: str(v) for k, v in spec.items() if k != "udsp"}, udsp)
    client = got.of("client")
    if udsp and client is not None and client < UDSP_SINCE:
        ctx.err(
            ("lustre", "udsp"),
            "E-LUSTRE-UDSP",
            f"UDSP rules need Lustre {show(UDSP_SINCE)} or later on the clients, which run "
            f"{show(client)}",
            hint="upgrade the clients, or leave udsp out (the route priorities say the same)",
        )
        return NO_TARGETS
    kernel = {role: got.kernel_routes(role) for role in ROLES}
    if len(set(kernel.values())) > 1:
        old = " and ".join(r + "s" for r in ROLES if kernel[r])
        new = " and ".join(r + "s" for r in ROLES if not kernel[r])
        ctx.warn(
            ("lustre",),
            "W-LUSTRE-MIXED",
            f"{new} run Lustre {show(KERNEL_ROUTES_REMOVED)} or later (routes only "
            f"from /etc/lnet.conf) while {old} run an older release: the two "
            "load LNet differently; README.txt says which file each needs",
        )
    return got
