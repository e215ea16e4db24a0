"""The ``tunables`` section: LNet settings a routed deployment needs, site-wide with a per-role
override (``tunables.roles.{client,router,server}``).

Reads the keys of :data:`lnetgen.tunables.SETTABLE` and checks them against the kernel's ranges
(the schema bounds each value; here the relations and the LNDs' own limits): ``retry_count``
below ``transaction_timeout``, ``retry_count`` 0 when ``health_sensitivity`` is 0 (the kernel
refuses retries with health off, and turns them off itself when it is left unset),
``peer_credits`` at most ``credits``, ``peer_credits`` within
o2iblnd's clamp on a site with o2ib nets, ``credits`` and ``peer_credits`` at most 65,535 for a
role with a kfi NI; router buffers only for routers.  Reports E-TUNABLE.  Adds
``Site.tunables`` (role -> name -> value, the override merged in).

Decision (releases): a tunable set for a role whose stated Lustre release (``lustre:``) predates
it (``Tunable.since``: ``max_recovery_ping_interval`` arrived in 2.16, ``response_tracking`` and
``recovery_limit`` in 2.14) is ``E-TUNABLE-RELEASE``: that kernel ignores the module option
("unknown parameter") and that lnetctl the key, so the setting would be lost without a word.
With no release stated nothing is assumed.

Decision (kfi): kfilnd refuses to start an NI whose ``credits`` or ``peer_credits`` exceed
KFILND_EP_KEY_MAX (``kfilnd_modparams.c``: "Credits cannot exceed 65535", -EINVAL), both as
module options and in ``lnetctl import``; an administrator expects the inventory to be refused
where the value is written, not a router that loses its kfi NI when LNet loads.  Only the roles
that have a kfi NI (clients and routers on a kfi client net) are held to it: a server's o2ib NI
takes any ``credits``.
"""

from __future__ import annotations

from typing import Any

from lnetgen.inventory.context import Context
from lnetgen.target import NO_TARGETS, Targets, show
from lnetgen.tunables import (
    BY_NAME,
    DEFAULT_RETRY_COUNT,
    DEFAULT_TRANSACTION_TIMEOUT,
    LND_CREDITS,
    O2IB_PEER_CREDITS,
    SETTABLE,
)
from lnetgen.yamlsrc import Path

ROLES = ("client", "router", "server")


def check_tunables(
    ctx: Context,
    o2ib: bool,
    lnds: dict[str, set[str]] | None = None,
    releases: Targets = NO_TARGETS,
) -> dict[str, dict[str, int]]:
    """role -> settings; ``o2ib``: the site has o2ib NIs (o2iblnd clamps peer_credits);
    ``lnds``: role -> the LNDs of its NIs (each LND's own limits, :data:`LND_CREDITS`);
    ``releases``: the Lustre release of each role, when the inventory states it."""
    spec: dict[str, Any] = ctx.data.get("tunables") or {}
    if not spec:
        return {}
    base = {k: int(v) for k, v in spec.items() if k in SETTABLE}
    out: dict[str, dict[str, int]] = {}
    roles = spec.get("roles") or {}
    seen: set[tuple[Path, str]] = set()  # a site-wide value wrong for every role: once
    late: dict[tuple[Path, str], list[str]] = {}  # (place, name) -> roles too old for it
    for role in ROLES:
        over = {k: int(v) for k, v in (roles.get(role) or {}).items() if k in SETTABLE}
        for name in over:
            if BY_NAME[name].router_only and role != "router":
                ctx.err(
                    ("tunables", "roles", role, name),
                    "E-TUNABLE",
                    f"{name} sizes a router's forwarding buffers; a {role} does not forward",
                    hint="set it site-wide or under roles.router",
                )
        merged = {**base, **over}
        where: dict[str, Path] = {}
        for k in merged:
            where[k] = ("tunables", "roles", role, k) if k in over else ("tunables", k)
        _relations(_Once(ctx, seen), merged, where, role, o2ib)
        _lnd_limits(_Once(ctx, seen), merged, where, role, (lnds or {}).get(role, set()))
        _release(late, merged, where, role, releases)
        if merged:
            out[role] = merged
    _report_late(ctx, late, releases)
    return out


class _Once:
    """Reports each (place, problem) once, whichever role found it first."""

    def __init__(self, ctx: Context, seen: set[tuple[Path, str]]) -> None:
        self.ctx, self.seen = ctx, seen

    def err(self, path: Path, code: str, msg: str) -> None:
        key = (path, msg.split(": ", 1)[1])
        if key not in self.seen:
            self.seen.add(key)
            self.ctx.err(path, code, msg)


def _relations(
    ctx: _Once, v: dict[str, int], where: dict[str, Path], role: str, o2ib: bool
) -> None:
    timeout = v.get("transaction_timeout", DEFAULT_TRANSACTION_TIMEOUT)
    health_off = v.get("health_sensitivity") == 0
    retry = v.get("retry_count", 0 if health_off else DEFAULT_RETRY_COUNT)
    if health_off and retry > 0:
        ctx.err(
            where["retry_count"],
            "E-TUNABLE",
            f"{role}: retry_count {retry} needs LNet health: health_sensitivity 0 turns it off "
            "and lnet/lnet/api-ni.c refuses a nonzero retry_count then (retry_count_set())",
        )
    if ("transaction_timeout" in v or "retry_count" in v) and retry >= timeout:
        key = "retry_count" if "retry_count" in v else "transaction_timeout"
        ctx.err(
            where[key],
            "E-TUNABLE",
            f"{role}: retry_count {retry} must be below transaction_timeout {timeout} "
            "(lnet/lnet/api-ni.c refuses it)",
        )
    if "peer_credits" in v:
        pc = v["peer_credits"]
        if "credits" in v and pc > v["credits"]:
            ctx.err(
                where["peer_credits"],
                "E-TUNABLE",
                f"{role}: peer_credits {pc} is above credits {v['credits']}; the LND would "
                "silently use credits instead",
            )
        lo, hi = O2IB_PEER_CREDITS
        if o2ib and not lo <= pc <= hi:
            ctx.err(
                where["peer_credits"],
                "E-TUNABLE",
                f"{role}: peer_credits {pc} is outside {lo}-{hi}, which o2iblnd clamps it to "
                "(lnet/klnds/o2iblnd/o2iblnd_modparams.c); another value would run",
            )


def _release(
    late: dict[tuple[Path, str], list[str]],
    v: dict[str, int],
    where: dict[str, Path],
    role: str,
    releases: Targets,
) -> None:
    """Collect in ``late`` each tunable the role's release predates (``Tunable.since``): the
    roles by (place, name), reported once per place by ``_report_late``."""
    have = releases.of(role)
    if have is None:
        return
    for name in v:
        since = BY_NAME[name].since
        if since is not None and have < since[0]:
            late.setdefault((where[name], name), []).append(role)


def _report_late(ctx: Context, late: dict[tuple[Path, str], list[str]], releases: Targets) -> None:
    for (path, name), roles in late.items():
        since = BY_NAME[name].since
        assert since is not None
        by: dict[str, list[str]] = {}  # release -> its roles, in role order
        for role in roles:
            v = releases.of(role)
            if v is not None:
                by.setdefault(show(v), []).append(role + "s")
        runs = ", ".join(f"{' and '.join(names)} run {v}" for v, names in by.items())
        ctx.err(
            path,
            "E-TUNABLE-RELEASE",
            f"{name} arrived in Lustre {show(since[0])} ({since[1]}), and {runs}: their kernel "
            "and lnetctl would ignore it",
            hint="set it only for the roles that run a release that has it (tunables.roles), "
            "or state the release they run",
        )


def _lnd_limits(
    ctx: _Once, v: dict[str, int], where: dict[str, Path], role: str, lnds: set[str]
) -> None:
    """The most each of the role's LNDs accepts of ``credits`` and ``peer_credits``."""
    for lnd in sorted(lnds):
        lim = LND_CREDITS.get(lnd)
        if lim is None:
            continue
        for name in ("credits", "peer_credits"):
            if name in v and v[name] > lim.most:
                ctx.err(
                    where[name],
                    "E-TUNABLE",
                    f"{role}: {name} {v[name]} is above {lim.most:,}, the most the {lnd} LND "
                    f"accepts ({lim.source}): it would refuse to start the {role}s' {lnd} NI",
                )


__all__ = ["ROLES", "check_tunables"]
