"""LNet tunables a routed deployment sets: their names, kernel defaults and ranges (with the
lustre-release source of each), where each goes in lnetctl YAML and in modprobe options, and
the settings of one host (:func:`host_settings`).

One flat vocabulary serves the inventory, the emitters and the live readers, so ``diff``
compares like with like:

* lnet-wide settings by name (``transaction_timeout``, ``tiny_router_buffers``...);
* per-NI settings per LND, ``<lnd>.<name>`` (``o2ib.peer_credits``): lnetctl YAML puts them in
  each NI's ``tunables:``, modprobe in the LND module's options (``options ko2iblnd ...``).

Only what the inventory sets is written, except ``drop_asym_route: 1``, written on every host
when the plan's route symmetry is proven (:func:`symmetric`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from lnetgen.guarantees import check_guarantees
from lnetgen.model import Site
from lnetgen.plan import Plan

#: Version of lustre-release the defaults and ranges were read from.
SOURCE_VERSION = "lustre-release 2.17.57 (master, commit c881f8ebcb)"
INT_MAX = 2**31 - 1
UINT_MAX = 2**32 - 1


@dataclass(frozen=True)
class Tunable:
    name: str  # inventory key and canonical name
    default: str  # the kernel's default, as documented
    source: str  # file (and symbol) in lustre-release
    lo: int
    hi: int
    yaml: tuple[str, str]  # (section, key) in lnetctl YAML; ("", "") when it has none
    module: str  # modprobe parameter ("" when none); per-NI ones go to the LND module
    per_ni: bool = False
    router_only: bool = False
    #: the first Lustre release whose kernel has it, and the change that added it; an older
    #: kernel ignores the module option and an older lnetctl the key: the setting is lost
    since: tuple[tuple[int, ...], str] | None = None


TUNABLES: tuple[Tunable, ...] = (
    Tunable(
        "peer_credits",
        "8 (o2ib, tcp), 16 (gni, kfi)",
        "include/linux/lnet/lib-lnet.h DEFAULT_PEER_CREDITS; lnet/klnds/gnilnd/gnilnd_modparams.c; "
        "lnet/klnds/kfilnd/kfilnd_modparams.c",
        1,
        255,
        ("tunables", "peer_credits"),
        "peer_credits",
        per_ni=True,
    ),
    Tunable(
        "credits",
        "256 (o2ib, tcp), 256/64 (gni), 512 (kfi)",
        "include/linux/lnet/lib-lnet.h DEFAULT_CREDITS; lnet/klnds/gnilnd/gnilnd.h; "
        "lnet/klnds/kfilnd/kfilnd_modparams.c",
        1,
        INT_MAX,
        ("tunables", "credits"),
        "credits",
        per_ni=True,
    ),
    Tunable(
        "peer_buffer_credits",
        "0 (the LND's own)",
        "lnet/lnet/router.c peer_buffer_credits, lnet_peer_buffer_credits()",
        0,
        INT_MAX,
        ("tunables", "peer_buffer_credits"),
        "peer_buffer_credits",
        per_ni=True,
    ),
    Tunable(
        "tiny_router_buffers",
        "0: 512 x 4 per CPT (LNET_NRB_TINY)",
        "lnet/lnet/router.c LNET_NRB_TINY, lnet_nrb_tiny_calculate()",
        0,
        INT_MAX,
        ("buffers", "tiny"),
        "tiny_router_buffers",
        router_only=True,
    ),
    Tunable(
        "small_router_buffers",
        "0: 4096 x 4 per CPT (LNET_NRB_SMALL)",
        "lnet/lnet/router.c LNET_NRB_SMALL, lnet_nrb_small_calculate()",
        0,
        INT_MAX,
        ("buffers", "small"),
        "small_router_buffers",
        router_only=True,
    ),
    Tunable(
        "large_router_buffers",
        "0: 256 x 4 per CPT (LNET_NRB_LARGE)",
        "lnet/lnet/router.c LNET_NRB_LARGE, lnet_nrb_large_calculate()",
        0,
        INT_MAX,
        ("buffers", "large"),
        "large_router_buffers",
        router_only=True,
    ),
    Tunable(
        "check_routers_before_use",
        "0",
        "lnet/lnet/router.c check_routers_before_use",
        0,
        1,
        ("", ""),
        "check_routers_before_use",
    ),
    Tunable(
        "alive_router_check_interval",
        "60 (seconds; 0 disables)",
        "lnet/lnet/router.c alive_router_check_interval",
        0,
        INT_MAX,
        ("", ""),
        "alive_router_check_interval",
    ),
    Tunable(
        "router_ping_timeout",
        "50 (seconds)",
        "lnet/lnet/router.c router_ping_timeout",
        1,
        INT_MAX,
        ("", ""),
        "router_ping_timeout",
    ),
    Tunable(
        "transaction_timeout",
        "150 (seconds; must exceed retry_count)",
        "lnet/lnet/api-ni.c LNET_TRANSACTION_TIMEOUT_DEFAULT, transaction_to_set()",
        1,
        UINT_MAX,
        ("global", "transaction_timeout"),
        "lnet_transaction_timeout",
    ),
    Tunable(
        "retry_count",
        "2 (must stay below transaction_timeout)",
        "lnet/lnet/api-ni.c LNET_RETRY_COUNT_DEFAULT, retry_count_set()",
        0,
        UINT_MAX,
        ("global", "retry_count"),
        "lnet_retry_count",
    ),
    Tunable(
        "drop_asym_route",
        "0",
        "lnet/lnet/api-ni.c lnet_drop_asym_route",
        0,
        1,
        ("global", "drop_asym_route"),
        "lnet_drop_asym_route",
        since=((2, 12, 1), "lustre-release tag v2_12_1; absent from v2_12_0"),
    ),
    # LNet health (lnet/lnet/api-ni.c; lnetctl import's global: and ``lnetctl set`` take the
    # same names, lnet/utils/lnetctl.c).  Left out: recovery_interval and router_sensitivity,
    # which the kernel takes and ignores (recovery_interval_set() only warns that it is
    # deprecated; router_sensitivity_percentage is read nowhere).
    Tunable(
        "health_sensitivity",
        "100 (0 turns health off, and with it retries: retry_count must be 0)",
        "lnet/lnet/api-ni.c lnet_health_sensitivity, sensitivity_set(); "
        "include/linux/lnet/lib-types.h LNET_MAX_HEALTH_VALUE",
        0,
        1000,
        ("global", "health_sensitivity"),
        "lnet_health_sensitivity",
    ),
    Tunable(
        "response_tracking",
        "3 (0 pings and pushes only, 1 GETs, 2 PUTs, 3 both)",
        "lnet/lnet/api-ni.c lnet_response_tracking, response_tracking_set()",
        0,
        3,
        ("global", "response_tracking"),
        "lnet_response_tracking",
        since=((2, 14), "lustre-release tag v2_14_0; development tag v2_13_56"),
    ),
    Tunable(
        "recovery_limit",
        "0 (seconds to keep recovering an unhealthy peer NI; 0: for ever)",
        "lnet/lnet/api-ni.c lnet_recovery_limit; lnet/utils/lnetconfig/liblnetconfig.c "
        "lustre_lnet_config_recovery_limit()",
        0,
        INT_MAX,
        ("global", "recovery_limit"),
        "lnet_recovery_limit",
        since=((2, 14), "lustre-release tag v2_14_0; development tag v2_13_57"),
    ),
    Tunable(
        "max_recovery_ping_interval",
        "900 (seconds)",
        "lnet/lnet/api-ni.c lnet_max_recovery_ping_interval, max_recovery_ping_interval_set()",
        1,
        INT_MAX,
        ("global", "max_recovery_ping_interval"),
        "lnet_max_recovery_ping_interval",
        since=((2, 16), "LU-14979, lustre-release tag v2_16_0; not in v2_15_6 or v2_15_8"),
    ),
)
BY_NAME = {t.name: t for t in TUNABLES}
#: Keys the inventory may set (drop_asym_route is lnetgen's to decide).
SETTABLE = tuple(t.name for t in TUNABLES if t.name != "drop_asym_route")
#: o2iblnd clamps peer_credits to [IBLND_CREDITS_DEFAULT, IBLND_CREDITS_MAX]
#: (lnet/klnds/o2iblnd/o2iblnd_modparams.c, o2iblnd.h): outside, another value would run.
O2IB_PEER_CREDITS = (8, 255)
DEFAULT_RETRY_COUNT, DEFAULT_TRANSACTION_TIMEOUT = 2, 150


@dataclass(frozen=True)
class LndCredits:
    """One LND's own defaults of the per-NI credits, and the most it accepts of either."""

    peer_credits: str  # the LND's default, as its source sets it
    credits: str
    most: int  # credits or peer_credits above this: the LND refuses to start the NI
    source: str


#: The per-NI credits of each LND lnetgen writes for (lustre-release ``SOURCE_VERSION``).
#: kfilnd refuses (-EINVAL, "Credits cannot exceed 65535") credits or peer_credits above
#: KFILND_EP_KEY_MAX, both at module load (``kfilnd_tunables_init``) and when an NI is added
#: (``kfilnd_tunables_setup``): a transaction key has 16 bits.
LND_CREDITS: dict[str, LndCredits] = {
    "o2ib": LndCredits("8", "256", INT_MAX, "lnet/klnds/o2iblnd/o2iblnd_modparams.c"),
    "tcp": LndCredits("8", "256", INT_MAX, "lnet/klnds/socklnd/socklnd_modparams.c"),
    "gni": LndCredits("16", "256 or 64", INT_MAX, "lnet/klnds/gnilnd/gnilnd_modparams.c"),
    "kfi": LndCredits(
        "16",
        "512",
        2**16 - 1,
        "lnet/klnds/kfilnd/kfilnd_modparams.c",
    ),
}


def default_hint(name: str, lnds: Iterable[str]) -> str:
    """The kernel default of tunable ``name`` for the LNDs a site uses (``lnds``): ``kernel
    default 16 (kfi), 8 (o2ib)`` for ``peer_credits`` on a kfi client side with o2ib storage,
    not the defaults of LNDs the site does not run; every LND's when it uses none listed."""
    t = BY_NAME[name]
    known = [lnd for lnd in dict.fromkeys(lnds) if lnd in LND_CREDITS]
    if not t.per_ni or name == "peer_buffer_credits" or not known:
        return f"kernel default {t.default} ({t.source})"
    by: dict[str, list[str]] = {}
    for lnd in sorted(known):
        by.setdefault(getattr(LND_CREDITS[lnd], name), []).append(lnd)
    text = ", ".join(f"{value} ({', '.join(names)})" for value, names in by.items())
    return f"kernel default {text} ({'; '.join(LND_CREDITS[lnd].source for lnd in sorted(known))})"


#: LND kernel module of each LND (modprobe options for per-NI tunables).
LND_MODULES = {
    "o2ib": "ko2iblnd",
    "tcp": "ksocklnd",
    "gni": "kgnilnd",
    "kfi": "kkfilnd",
    "efa": "kefalnd",
}
#: Key order of an NI's ``tunables:`` as ``lnetctl export`` prints them.
NI_ORDER = ("peer_credits", "peer_buffer_credits", "credits")
BUFFER_ORDER = ("tiny", "small", "large")


def lnd_module(lnd: str) -> str:
    return LND_MODULES.get(lnd, f"k{lnd}lnd")


@dataclass(frozen=True)
class HostSettings:
    """One host's settings in the flat vocabulary, plus how to write them."""

    values: Mapping[str, int]  # name or "<lnd>.<name>" -> value
    lnds: tuple[str, ...]

    def ni(self, lnd: str) -> dict[str, int]:
        """The ``tunables:`` of an NI of ``lnd``, in export order."""
        return {k: self.values[f"{lnd}.{k}"] for k in NI_ORDER if f"{lnd}.{k}" in self.values}

    def buffers(self) -> dict[str, int]:
        return {
            k: self.values[f"{k}_router_buffers"]
            for k in BUFFER_ORDER
            if f"{k}_router_buffers" in self.values
        }

    def globals(self) -> dict[str, int]:
        """``global:`` keys in an order the kernel accepts one at a time."""
        keys = ["drop_asym_route", *_timeout_order(self.values), *_HEALTH_AFTER]
        return {k: self.values[k] for k in keys if k in self.values}

    def lnet_options(self) -> list[tuple[str, int]]:
        """``options lnet`` parameters (the networks/routes/forwarding ones aside)."""
        out = []
        order = [
            t.name
            for t in TUNABLES
            if not t.per_ni and t.name not in _TIMEOUTS and t.name != "health_sensitivity"
        ]
        order[order.index("drop_asym_route") : order.index("drop_asym_route")] = _timeout_order(
            self.values
        )
        for name in order:
            if name in self.values:
                out.append((BY_NAME[name].module, self.values[name]))
        for lnd in self.lnds:
            key = f"{lnd}.peer_buffer_credits"
            if key in self.values:
                out.append(("peer_buffer_credits", self.values[key]))
                break
        return out

    def lnd_options(self) -> list[tuple[str, list[tuple[str, int]]]]:
        """``options <module>`` lines for the LNDs of this host that have settings."""
        out = []
        for lnd in self.lnds:
            params = [
                (k, self.values[f"{lnd}.{k}"])
                for k in ("peer_credits", "credits")
                if f"{lnd}.{k}" in self.values
            ]
            if params:
                out.append((lnd_module(lnd), params))
        return out


_TIMEOUTS = ("transaction_timeout", "retry_count")
#: The health settings after the timeouts in ``global:`` (the sensitivity goes before them).
_HEALTH_AFTER = ("response_tracking", "recovery_limit", "max_recovery_ping_interval")


def _timeout_order(values: Mapping[str, int]) -> list[str]:
    """The kernel checks each against the current value of the other (api-ni.c): a timeout
    above the default retry count goes first, else the retry count does.  health_sensitivity
    goes before both: the kernel refuses a nonzero retry count while it is 0 (retry_count_set()),
    so a host whose health is off takes its new sensitivity first."""
    timeout = values.get("transaction_timeout")
    pair = ["transaction_timeout", "retry_count"]
    if timeout is not None and timeout <= DEFAULT_RETRY_COUNT:
        pair.reverse()
    return ["health_sensitivity", *pair]


#: The kernel's defaults where they are one number (lustre-release, see ``TUNABLES``): a
#: dump that shows one of these the plan does not set is not a difference.
KERNEL_DEFAULTS: dict[str, int] = {
    "transaction_timeout": DEFAULT_TRANSACTION_TIMEOUT,
    "retry_count": DEFAULT_RETRY_COUNT,
    "drop_asym_route": 0,
    "health_sensitivity": 100,
    "response_tracking": 3,
    "recovery_limit": 0,
    "max_recovery_ping_interval": 900,
    "check_routers_before_use": 0,
    "alive_router_check_interval": 60,
    "router_ping_timeout": 50,
    "tiny_router_buffers": 0,
    "small_router_buffers": 0,
    "large_router_buffers": 0,
    **{f"{lnd}.peer_credits": 8 for lnd in ("o2ib", "tcp")},
    **{f"{lnd}.credits": 256 for lnd in ("o2ib", "tcp")},
    "kfi.peer_credits": 16,
    "kfi.credits": 512,
    **{f"{lnd}.peer_buffer_credits": 0 for lnd in LND_MODULES},
}

#: Names each kind of live dump can show (the others are not compared against it).
YAML_SHOWN = frozenset(t.name for t in TUNABLES if t.yaml[0])
MODPROBE_SHOWN = frozenset(t.name for t in TUNABLES if t.module)
_BY_YAML = {t.yaml: t.name for t in TUNABLES if t.yaml[0]}
_BY_MODULE = {t.module: t.name for t in TUNABLES if t.module and not t.per_ni}
_LND_BY_MODULE = {m: lnd for lnd, m in LND_MODULES.items()}


def from_yaml(section: str, values: Mapping[str, object]) -> dict[str, int]:
    """``buffers:`` or ``global:`` of lnetctl YAML in the flat vocabulary (others ignored)."""
    out = {}
    for key, value in values.items():
        name = _BY_YAML.get((section, key))
        if name is not None and is_int(value):
            out[name] = int(str(value))
    return out


def from_ni(lnd: str, values: Mapping[str, object]) -> dict[str, int]:
    """An NI's ``tunables:`` as ``<lnd>.<name>``."""
    return {f"{lnd}.{k}": int(str(v)) for k, v in values.items() if k in NI_ORDER and is_int(v)}


def from_module(module: str, params: Mapping[str, str], lnds: Iterable[str]) -> dict[str, int]:
    """modprobe options of ``module`` (``lnet`` or an LND module) in the flat vocabulary;
    ``lnds``: the host's LNDs, which ``lnet peer_buffer_credits=`` applies to."""
    out: dict[str, int] = {}
    if module == "lnet":
        for key, value in params.items():
            if not is_int(value):
                continue
            if key == "peer_buffer_credits":
                out.update({f"{lnd}.peer_buffer_credits": int(value) for lnd in lnds})
            elif key in _BY_MODULE:
                out[_BY_MODULE[key]] = int(value)
        return out
    lnd = _LND_BY_MODULE.get(module)
    if lnd is not None:
        for key in ("peer_credits", "credits"):
            if key in params and is_int(params[key]):
                out[f"{lnd}.{key}"] = int(params[key])
    return out


def is_int(value: object) -> bool:
    """Whether the settings readers take ``value`` for an integer (any digits, so a reader of
    live state refuses what ``int()`` would not read, e.g. thousands of digits)."""
    text = str(value).strip()
    return text.lstrip("-").isdigit()


def symmetric(plan: Plan) -> bool:
    """True when the plan's route symmetry is proven: servers route back through exactly the
    routers clients use, so ``drop_asym_route`` drops nothing."""
    return not any(p.startswith("symmetry") for p in check_guarantees(plan, leaf_local=False))


def host_settings(site: Site, role: str, nets: Iterable[str], sym: bool) -> HostSettings:
    """The settings of a host of ``role`` on ``nets``: the inventory's (site-wide, then the
    role's override), per-NI ones for each of its LNDs; ``drop_asym_route`` when ``sym`` (and
    the role's release has it);
    ``retry_count: 0`` with ``health_sensitivity: 0`` (what the kernel then runs)."""
    lnds = tuple(dict.fromkeys(_lnd(n) for n in nets))
    chosen = site.tunables.get(role, {}) if site.tunables else {}
    values: dict[str, int] = {}
    for name, value in chosen.items():
        t = BY_NAME[name]
        if t.router_only and role != "router":
            continue
        if t.per_ni:
            for lnd in lnds:
                values[f"{lnd}.{name}"] = value
        else:
            values[name] = value
    if values.get("health_sensitivity") == 0:
        # the kernel sets retry_count to 0 when health is turned off (sensitivity_set()):
        # written, so that the files say what runs and diff does not see a changed count
        values.setdefault("retry_count", 0)
    release = site.lustre.of(role)
    since = BY_NAME["drop_asym_route"].since
    if sym and (release is None or since is None or release >= since[0]):
        values["drop_asym_route"] = 1  # not for a release whose kernel lacks it (2.12.0)
    return HostSettings(values, lnds)


def _lnd(net: str) -> str:
    return net.rstrip("0123456789")


__all__ = [
    "BY_NAME",
    "LND_CREDITS",
    "LND_MODULES",
    "MODPROBE_SHOWN",
    "O2IB_PEER_CREDITS",
    "SETTABLE",
    "SOURCE_VERSION",
    "TUNABLES",
    "YAML_SHOWN",
    "HostSettings",
    "LndCredits",
    "Tunable",
    "default_hint",
    "from_module",
    "from_ni",
    "from_yaml",
    "host_settings",
    "lnd_module",
    "symmetric",
]
