"""What the kernel would refuse or silently change in a host's tunables (``V-TUNABLE``).

``verify`` proves reachability; a file can route perfectly and still not load as written.  The
inventory's own check (``lnetgen.inventory.tunables``) keeps lnetgen from writing such values,
but a tree edited by hand, an lnet.conf written by another tool or a live dump is read as it
is, so the same kernel rules are held against each endpoint's tunables here:

* each value within the range the kernel takes (``lnetgen.tunables.TUNABLES``: ``lo``-``hi``);
* ``retry_count`` below ``transaction_timeout`` (``api-ni.c`` ``transaction_to_set()`` and
  ``retry_count_set()`` refuse the other order: -EINVAL), the missing one at its default;
* no nonzero ``retry_count`` with ``health_sensitivity`` 0 (``retry_count_set()`` refuses
  retries while health is off; ``lnetctl import`` applies ``global:`` in file order);
* an LND's ``peer_credits`` at most its ``credits`` (the LND would run ``credits``), within
  o2iblnd's clamp 8-255 (``o2iblnd_modparams.c``: another value would run), and ``credits``
  and ``peer_credits`` at most what kfilnd accepts (65,535: it refuses to start the NI).

Decision: these are errors, as the inventory check's are: the file does not configure what it
says, and a tree that passes ``verify`` should load as written.  Located at the key in an
lnet.conf (or the module option in a modprobe file).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from lnetgen.tunables import (
    BY_NAME,
    DEFAULT_RETRY_COUNT,
    DEFAULT_TRANSACTION_TIMEOUT,
    LND_CREDITS,
    O2IB_PEER_CREDITS,
)
from lnetgen.verify.findings import Collector
from lnetgen.verify.locate import Locator
from lnetgen.verify.world import Endpoint, World


def _place(loc: Locator, file: str, name: str) -> tuple[int, int, str]:
    """The line and column of ``name`` (``retry_count``, ``o2ib.peer_credits``) in ``file``:
    its YAML key or its module option; (0, 0, "$") when it cannot be found."""
    tunable = BY_NAME.get(name.rsplit(".", 1)[-1])
    keys = [name.rsplit(".", 1)[-1]]
    if tunable is not None and tunable.module:
        keys.insert(0, tunable.module)
    for n, text in enumerate(loc.lines(file), 1):
        for key in keys:
            m = re.search(rf"(?<![\w.]){re.escape(key)}\s*([:=])", text)
            if m is None:
                continue
            if m[1] == "=":  # a module option
                return n, m.start() + 1, f"$.{key}"
            section = tunable.yaml[0] if tunable is not None and tunable.yaml[0] else ""
            if section == "global":
                return n, m.start() + 1, f"$.global.{key}"
            return n, m.start() + 1, f"$.net.{name}"  # an NI's tunables
    return 0, 0, "$"


def _problems(v: Mapping[str, int]) -> list[tuple[str, str]]:
    """(tunable, message) for each value the kernel would refuse or run as another."""
    out: list[tuple[str, str]] = []
    for name, value in v.items():
        t = BY_NAME.get(name.rsplit(".", 1)[-1])
        if "." in name:
            continue  # per-NI: each LND's own limits, below
        if t is not None and not t.lo <= value <= t.hi:
            out.append((name, f"{name} {value} is outside {t.lo}-{t.hi}, what the kernel takes"))
    timeout = v.get("transaction_timeout", DEFAULT_TRANSACTION_TIMEOUT)
    health_off = v.get("health_sensitivity") == 0
    retry = v.get("retry_count", 0 if health_off else DEFAULT_RETRY_COUNT)
    if health_off and retry > 0:
        out.append(
            (
                "retry_count",
                f"retry_count {retry} with health_sensitivity 0: the kernel refuses retries "
                "while health is off (api-ni.c retry_count_set())",
            )
        )
    if ("transaction_timeout" in v or "retry_count" in v) and retry >= timeout:
        key = "transaction_timeout" if "transaction_timeout" in v else "retry_count"
        out.append(
            (
                key,
                f"retry_count {retry} is not below transaction_timeout {timeout}: the kernel "
                "refuses it (api-ni.c transaction_to_set(), retry_count_set())",
            )
        )
    lnds = sorted({k.split(".", 1)[0] for k in v if "." in k})
    for lnd in lnds:
        pc, cr = v.get(f"{lnd}.peer_credits"), v.get(f"{lnd}.credits")
        if pc is not None and cr is not None and pc > cr:
            out.append(
                (
                    f"{lnd}.peer_credits",
                    f"{lnd} peer_credits {pc} is above credits {cr}: the LND runs {cr}",
                )
            )
        lo, hi = O2IB_PEER_CREDITS
        if lnd == "o2ib" and pc is not None and not lo <= pc <= hi:
            out.append(
                (
                    "o2ib.peer_credits",
                    f"o2ib peer_credits {pc} is outside {lo}-{hi}, which o2iblnd clamps it to "
                    "(o2iblnd_modparams.c): another value runs",
                )
            )
        lim = LND_CREDITS.get(lnd)
        for name, given in (("credits", cr), ("peer_credits", pc)):
            if lim is not None and given is not None and given > lim.most:
                out.append(
                    (
                        f"{lnd}.{name}",
                        f"{lnd} {name} {given} is above {lim.most:,}, the most the {lnd} LND "
                        f"accepts ({lim.source}): it refuses to start the NI",
                    )
                )
    return out


def check_tunables(world: World, out: Collector, loc: Locator) -> None:
    """``V-TUNABLE`` for each endpoint in scope whose tunables the kernel would not run."""
    for ep in sorted(world.endpoints.values(), key=lambda e: e.name):
        if world.in_scope(ep) and ep.state.tunables:
            _endpoint(ep, out, loc)


def _endpoint(ep: Endpoint, out: Collector, loc: Locator) -> None:
    assert ep.state.tunables is not None
    for name, message in _problems(ep.state.tunables):
        line, col, path = _place(loc, ep.file, name)
        out.add("V-TUNABLE", ep.file, line, col, path, f"{ep.name} ({ep.role}): {message}")


__all__ = ["check_tunables"]
