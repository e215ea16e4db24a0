"""LNet net names and NIDs as the inventory writes them: parsed, or reported with a hint.

Old manuals and configs name LNDs current Lustre no longer parses (openib, elan, ptl...); the
hint says what replaced them.  The client_nets, routers and clients sections read nets here.
"""

from __future__ import annotations

import difflib

from lnetgen import nodes
from lnetgen.inventory.context import Context
from lnetgen.yamlsrc import Path

#: A numeric NID address (gni, kfi, ptlf, bxi3f) is a 32-bit number.
MAX_NUMERIC_ADDR = 0xFFFFFFFF

#: Net names old manuals and configs use that current Lustre does not parse.
_LND_HINTS = {
    "elan": "Quadrics Elan (elan) was removed from Lustre; no current LND replaces it",
    "qsw": "Quadrics (qsw) was removed from Lustre; no current LND replaces it",
    "openib": "use o2ib for InfiniBand (openib was removed)",
    "vib": "use o2ib for InfiniBand (vib was removed)",
    "iib": "use o2ib for InfiniBand (iib was removed)",
    "ib": "InfiniBand's LND is o2ib",
    "ptl": "Portals 3 (ptl) was removed; Cray Gemini/Aries is gni, Portals 4 is ptlf",
    "ra": "Cray RapidArray (ra) was removed; Cray Gemini/Aries is gni, Slingshot is kfi",
    "mx": "Myrinet MX (mx) was removed; use tcp or o2ib",
    "gm": "Myrinet GM (gm) was removed; use tcp or o2ib",
    "ciber": "the ciber LND was removed",
    "tofu": "Tofu has no net name that Lustre's parser accepts",
    "lo": "the loopback net lo cannot be configured",
    "eth": "Ethernet's LND is tcp",
    "ethernet": "Ethernet's LND is tcp",
    "socklnd": "Ethernet's LND is tcp",
    "cxi": "HPE Slingshot (CXI) uses kfi",
    "slingshot": "HPE Slingshot (CXI) uses kfi",
}


def read_net(ctx: Context, text: str, path: Path) -> nodes.Net | None:
    """The net ``text`` names, or None after reporting why it does not parse."""
    try:
        return nodes.parse_net(text)
    except nodes.NodeSyntaxError as exc:
        lnd = text.strip().rstrip("0123456789")
        if lnd in nodes.LNDS:
            ctx.err(path, "E-NET-RANGE", str(exc), hint="LNet net numbers are 16 bits: 0-65535")
        else:
            hint = _LND_HINTS.get(lnd) or _did_you_mean(lnd)
            ctx.err(path, "E-NET-LND", str(exc), hint=hint)
        return None


def _did_you_mean(lnd: str) -> str:
    """ "did you mean gni?" for a typo: the same letters in another order (``gin``), else the
    closest current LND; else the list (the message already names the known LNDs)."""
    typo = lnd.lower()
    same = [k for k in sorted(nodes.LNDS) if sorted(k) == sorted(typo)]
    close = same or difflib.get_close_matches(typo, sorted(nodes.LNDS), n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]}?"
    return "current LNDs: " + ", ".join(sorted(nodes.LNDS))


def read_nid(ctx: Context, text: str, path: Path) -> nodes.Nid | None:
    """The NID ``text`` names, or None after reporting why it does not parse or fit."""
    net = read_net(ctx, text.rpartition("@")[2], path)  # LND and range problems, with hints
    if net is None:
        return None
    try:
        nid = nodes.parse_nid(text)
    except nodes.NodeSyntaxError as exc:
        ctx.err(path, "E-NID", str(exc))
        return None
    if oversized(nid):
        ctx.err(
            path,
            "E-NID",
            f"{text!r}: {net.lnd} addresses are 32-bit numbers (at most {MAX_NUMERIC_ADDR})",
        )
        return None
    return nid


def oversized(nid: nodes.Nid) -> bool:
    """A numeric address too large for its LND (IP addresses always fit)."""
    return not nid.net.ip_based and int(nid.addr) > MAX_NUMERIC_ADDR
