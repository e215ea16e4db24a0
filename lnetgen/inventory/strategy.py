"""The ``strategy`` section: defaults for the routing plan.

Reads ``strategy`` (``default``, ``storage_lnd``, ``storage_net_base``, ``groups`` ratios and
backup policy), filling in the defaults.  Reports E-NET-LND when the storage LND numbers its NIDs
(servers and routers give an IP address on the storage side).  Adds ``Site.strategy``.
"""

from __future__ import annotations

from lnetgen import nodes
from lnetgen.inventory.context import Context
from lnetgen.model import GroupParams, StrategyParams


def check_strategy(ctx: Context) -> StrategyParams:
    st = ctx.data.get("strategy", {})
    gp = st.get("groups", {})

    def ratio(key: str, default: tuple[int, int]) -> tuple[int, int]:
        if key not in gp:
            return default
        a, b = str(gp[key]).split(":")
        return int(a), int(b)

    lnd = st.get("storage_lnd", "o2ib")
    if not nodes.LNDS.get(lnd, True):
        ctx.err(
            ("strategy", "storage_lnd"),
            "E-NET-LND",
            f"{lnd} NIDs are numbers, but servers and routers give their storage side "
            "as an IP address",
            hint="use o2ib, tcp or efa for the storage nets",
        )
    return StrategyParams(
        default=st.get("default", "projection"),
        storage_lnd=lnd,
        storage_net_base=st.get("storage_net_base", 1),
        groups=GroupParams(
            ratio("oss", (4, 3)),
            ratio("mds", (2, 1)),
            gp.get("backup", "balanced"),
            gp.get("backup_priority", 1),
        ),
    )
