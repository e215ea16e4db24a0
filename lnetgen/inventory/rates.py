"""The ``rates:`` section: what each component of the site carries, with its source.

Each rate is ``"<number> MB/s|GB/s|TB/s"``; ``torus_link`` gives one per dimension (``x``,
``y``, ``z``) and, where the two directions of a dimension differ, per direction (``x+``...,
overriding the dimension).  E-RATES-TORUS: a direction left without a rate;
W-RATES-TORUS: torus link rates on a site whose client side is not a torus, W-RATES-DRAGONFLY:
``local_link``/``global_link`` on one that is not a dragonfly (both would be ignored).  Adds
``Site.rates``.

A switch may carry its own ``ib_link`` and ``uplink`` (``fabrics[].switches[].rates``, read by
``switch_rates``): a director of another generation, a faster TOR.  They apply to the hosts'
ports on that switch and to its leaf-to-spine links, over the site's figures.  Per switch, not
per leaf module: the line cards of one chassis run at one rate.  W-RATES-SWITCH: rates on a
switch of a compute fabric, whose links are ``rates.fabric_link`` (ignored).
"""

from __future__ import annotations

from lnetgen.inventory.context import Context
from lnetgen.rates import COMPONENTS, DIRECTION_KEYS, NO_RATES, Rate, Rates, parse_rate
from lnetgen.yamlsrc import Path

#: The rates that only a dragonfly client side uses.
DRAGONFLY_KEYS = ("local_link", "global_link")


def check_rates(ctx: Context, has_torus: bool, has_dragonfly: bool = False) -> Rates:
    spec = ctx.data.get("rates")
    if not isinstance(spec, dict):
        return NO_RATES
    got: dict[str, Rate | None] = {}
    for key in COMPONENTS:
        entry = spec.get(key)
        if isinstance(entry, dict) and key in DRAGONFLY_KEYS and not has_dragonfly:
            ctx.warn(
                ("rates", key),
                "W-RATES-DRAGONFLY",
                f"{key} on a site whose client side is not a dragonfly: ignored",
            )
        elif isinstance(entry, dict):
            try:
                got[key] = Rate(parse_rate(str(entry["rate"])), str(entry["source"]))
            except (KeyError, ValueError) as exc:  # the schema reports it as well
                ctx.err(("rates", key), "E-RATES", str(exc))
    torus: tuple[Rate, ...] | None = None
    tl = spec.get("torus_link")
    if isinstance(tl, dict):
        if not has_torus:
            ctx.warn(
                ("rates", "torus_link"),
                "W-RATES-TORUS",
                "torus link rates on a site whose client side is not a torus: ignored",
            )
        else:
            torus = _torus(ctx, tl)
    return Rates(torus_link=torus, **got)


def switch_rates(ctx: Context, spec: dict[str, object], path: Path, role: str) -> Rates:
    """A switch's own ``rates`` (``ib_link``, ``uplink``); none on a compute fabric's switch."""
    given = spec.get("rates")
    if not isinstance(given, dict) or not given:
        return NO_RATES
    if role != "storage":
        ctx.warn(
            (*path, "rates"),
            "W-RATES-SWITCH",
            f"rates on switch {spec['name']} of a compute fabric: ignored (its links are "
            "rates.fabric_link)",
        )
        return NO_RATES
    got: dict[str, Rate] = {}
    for key, entry in given.items():
        try:
            got[str(key)] = Rate(parse_rate(str(entry["rate"])), str(entry["source"]))
        except (KeyError, TypeError, ValueError) as exc:  # the schema reports it as well
            ctx.err((*path, "rates", str(key)), "E-RATES", str(exc))
    return Rates(**got)  # type: ignore[arg-type]


def _torus(ctx: Context, tl: dict[str, object]) -> tuple[Rate, ...] | None:
    source = str(tl.get("source", ""))
    rates: list[Rate] = []
    missing: list[str] = []
    for key in DIRECTION_KEYS:
        text = tl.get(key, tl.get(key[0]))
        if text is None:
            missing.append(key)
            continue
        try:
            rates.append(Rate(parse_rate(str(text)), source))
        except ValueError as exc:
            ctx.err(("rates", "torus_link"), "E-RATES", str(exc))
            return None
    if missing:
        ctx.err(
            ("rates", "torus_link"),
            "E-RATES-TORUS",
            f"no rate for torus direction(s) {', '.join(missing)}",
            hint="give x, y and z (or each direction x+, x-, ...)",
        )
        return None
    return tuple(rates)
