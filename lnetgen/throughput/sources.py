"""Where each rate of a prediction comes from: the inventory's ``rates:`` entry behind a
resource (a switch's own ``ib_link`` or ``uplink`` over the site's), as reports print it
(``"oss 1250 MB/s: seed 000 s3: ..."``, :func:`lnetgen.traffic.settings.rate_entry`); and the
kinds of resource a prediction on a site may cross without a rate, which make its figure an
upper bound (:func:`unrated`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from lnetgen.model import Site, Switch
from lnetgen.rates import Rate
from lnetgen.throughput.fabric import FabricRoutes
from lnetgen.throughput.problem import KINDS, RATE_OF
from lnetgen.topology import DIRECTIONS
from lnetgen.traffic.settings import Settings, mb_s, rate_entry, torus_entry

#: Kinds whose rate a switch may give for its own ports and links (``Site.switch_rate``).
PER_SWITCH = ("router port", "server port", "leaf uplinks", "leaf downlinks", "spine link")
#: What each rate is in a legend: per port of a host, per link of a leaf's pooled uplinks.
_UNIT = {"ib_link": " (per port)", "uplink": " (per link)"}


def resource_entry(site: Site, kind: str, name: str) -> str:
    """The entry of the rate behind resource ``name`` of ``kind`` ("" when it has none): a
    torus link ``"(14,12,4)Y+"`` its direction's, a host's port the ``ib_link`` of the switch
    it sits on, a leaf's uplinks (``"core1/L01"``) or a spine link (``"core1/L01 port 13"``)
    the ``uplink`` of its switch, any other kind the site's rate."""
    if kind == "torus link":
        tl = site.rates.torus_link
        d = name.rpartition(")")[2]
        return torus_entry(tl, DIRECTIONS.index(d)) if tl is not None and d in DIRECTIONS else ""
    if kind in PER_SWITCH:
        return _switch_entry(site, RATE_OF[kind], _switch_of(site, kind, [name]).get(name))
    key = RATE_OF.get(kind, "")
    r = site.rates.get(key) if key else None
    return rate_entry(key, r) if r is not None else ""


def kind_entries(site: Site, kind: str, names: Callable[[], Iterable[str]]) -> tuple[str, ...]:
    """The entries behind the resources of ``kind`` a prediction crossed (``names()``, asked
    only where switches give their own rates), sorted; ``()`` when none has a rate."""
    if kind == "torus link":
        tl = site.rates.torus_link
        return (torus_entry(tl),) if tl is not None else ()
    if kind not in PER_SWITCH:
        entry = resource_entry(site, kind, "")
        return (entry,) if entry else ()
    key = RATE_OF[kind]
    if not any(sw.rates.get(key) for sw in _switches(site)):
        entry = _switch_entry(site, key, None)
        return (entry,) if entry else ()
    listed = list(names())
    where = _switch_of(site, kind, listed)
    got = {_switch_entry(site, key, where.get(n)) for n in listed}
    return tuple(sorted(e for e in got if e))


def unrated(
    site: Site,
    fabric_routes: FabricRoutes | None = None,
    storage_routes: FabricRoutes | None = None,
) -> tuple[str, ...]:
    """The kinds a prediction on ``site`` may cross whose rate the site does not give (in
    ``Prediction.unknown`` order): for a table of several plans, which share these.  Kinds
    every rank crosses (routers, ports, OSS, OST, injection, the torus) are exact; a leaf's
    uplinks count when any leaf with uplinks lacks a rate, whether or not a plan crosses it."""
    r = site.rates
    out = ["torus link"] if site.torus is not None and r.torus_link is None else []
    for kind in _crossed(site, fabric_routes, storage_routes):
        key = RATE_OF[kind]
        if kind == "router port":
            missing = any(_rate_on(site, key, rt.attach.switch) is None for rt in site.routers)
        elif kind == "server port":
            missing = any(
                _rate_on(site, key, s.attach.switch) is None for s in site.servers if s.osts
            )
        elif kind in PER_SWITCH:
            missing = any(_rate_on(site, key, sw.name) is None for sw in _with_uplinks(site))
        else:
            missing = r.get(key) is None
        if missing:
            out.append(kind)
    return tuple(out)


def site_entries(
    site: Site,
    fabric_routes: FabricRoutes | None = None,
    storage_routes: FabricRoutes | None = None,
) -> dict[str, tuple[str, ...]]:
    """Per kind a prediction on ``site`` may cross, the entries of the rates the site gives it
    (a switch's own as well): the legend of a table of several plans."""
    out: dict[str, tuple[str, ...]] = {}
    if site.torus is not None and site.rates.torus_link is not None:
        out["torus link"] = (torus_entry(site.rates.torus_link),)
    for kind in _crossed(site, fabric_routes, storage_routes):
        key = RATE_OF[kind]
        entries = {_switch_entry(site, key, None)}
        if kind in PER_SWITCH:
            entries |= {_switch_entry(site, key, sw.name) for sw in _switches(site)}
        entries.discard("")
        if entries:
            out[kind] = tuple(sorted(entries))
    return out


def legend(
    settings: Settings | None, sources: Iterable[tuple[str, tuple[str, ...]]]
) -> list[tuple[str, tuple[str, ...]]]:
    """The lines of a rates legend: each entry once, with what uses it -- "one flow" and "a
    link's saturation" for the flow counts' rates (``settings``; an option's value is named
    by the option), the kinds of resource for a prediction's (``sources``: kind, entries) --
    in the order first met."""
    users: dict[str, list[str]] = {}
    if settings is not None:
        for key, entry, use, value in (
            ("ost", settings.ost_source, "one flow", settings.ost_mb_s),
            ("torus_link", settings.link_source, "a link's saturation", settings.link_mb_s),
        ):
            if value is None:
                continue
            if entry.startswith("--") or not entry:
                entry = f"{key} {mb_s(value)}: {entry or 'given by the caller'}"
            users.setdefault(entry, []).append(use)
    for kind, entries in sources:
        for entry in entries:
            unit = next((u for k, u in _UNIT.items() if entry.startswith(k + " ")), "")
            users.setdefault(entry, []).append(kind + unit)
    return [(entry, tuple(dict.fromkeys(u))) for entry, u in users.items()]


def merged(
    sources: Iterable[Mapping[str, tuple[str, ...]]],
) -> list[tuple[str, tuple[str, ...]]]:
    """Several predictions' rate entries (each ``Prediction.sources``: kind -> entries) as
    one: per kind its entries, each once, kinds and entries in the order first met."""
    kinds: dict[str, tuple[str, ...]] = {}
    for each in sources:
        for kind, entries in each.items():
            kinds[kind] = tuple(dict.fromkeys((*kinds.get(kind, ()), *entries)))
    return list(kinds.items())


def legend_lines(
    settings: Settings | None, sources: Iterable[tuple[str, tuple[str, ...]]]
) -> list[str]:
    """The :func:`legend` as text, one line per entry: ``"oss 1250 MB/s: ... [oss]"`` (the
    entry, then [what uses it])."""
    return [f"{entry} [{', '.join(users)}]" for entry, users in legend(settings, sources)]


def _crossed(
    site: Site, fabric_routes: FabricRoutes | None, storage_routes: FabricRoutes | None
) -> list[str]:
    """The kinds of resource (``KINDS`` order) a prediction on ``site`` may cross."""
    crossed = {"injection", "router", "router port", "server port", "oss", "ost"}
    if fabric_routes is not None and site.torus is None:
        crossed.add("fabric link")
    if site.dragonfly is not None and site.clients.switch is not None:
        crossed |= {"local link", "global link"}
    if storage_routes is not None:
        crossed.add("spine link")
    if _with_uplinks(site):
        crossed |= {"leaf uplinks", "leaf downlinks"}
    return [k for k in KINDS if k in crossed]


def _switches(site: Site) -> list[Switch]:
    return [sw for f in site.fabrics if f.role == "storage" for sw in f.switches]


def _with_uplinks(site: Site) -> list[Switch]:
    return [sw for sw in _switches(site) if any(lf.uplinks for lf in sw.leaves)]


def _rate_on(site: Site, key: str, switch: str) -> Rate | None:
    return site.switch_rate(key, switch)


def _switch_entry(site: Site, key: str, switch: str | None) -> str:
    """The entry of ``key`` on ``switch``: the switch's own (named so), else the site's; ""
    when neither gives one."""
    sw = site.switch(switch) if switch else None
    own = sw.rates.get(key) if sw is not None else None
    if own is not None:
        return rate_entry(key, own, f" on switch {switch}")
    r = site.rates.get(key)
    return rate_entry(key, r) if r is not None else ""


def _switch_of(site: Site, kind: str, names: list[str]) -> dict[str, str]:
    """The switch of each name: a port's host's, or a leaf's (``"core1/L01"``) or spine
    link's (``"core1/L01 port 13"``)."""
    if kind not in ("router port", "server port"):
        return {n: n.partition("/")[0] for n in names}
    hosts = {rt.name: rt.attach.switch for rt in site.routers}
    hosts.update({s.name: s.attach.switch for s in site.servers})
    return {n: hosts[n] for n in names if n in hosts}


__all__ = [
    "PER_SWITCH",
    "kind_entries",
    "legend",
    "legend_lines",
    "merged",
    "resource_entry",
    "site_entries",
    "unrated",
]
