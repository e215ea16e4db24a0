"""The tunables step of ``plan_changes``: which changed LNet tunables ``lnetctl set`` or a
run-time module parameter sets live, and which take effect only when LNet is loaded again (an
outage of that host)."""

from __future__ import annotations

from collections.abc import Iterable

from lnetgen.diff.result import CLIENT, ROUTER, SERVER, HostDiff

#: A tunable that takes effect only when LNet is loaded again (per-NI credits such as
#: ``o2ib.peer_credits``, the LND module options, ``check_routers_before_use``, a setting to
#: remove) is no live change either, like a NID change: LNet must be unloaded and loaded again
#: with the new files on that host.  A server's targets are out while it reloads (unless failed
#: over to the partner); a client's mounts must go.  Steps that only run ``lnetctl set`` or
#: write a run-time module parameter stay live.
#:
#: A router is drained first (``lnetctl set routing 0``) so that its peers stop choosing it --
#: but only where they have another gateway to turn to.  A drained router drops what it is
#: given to forward at once (``lnetgen.diff.paths``), so for a router that is the only gateway
#: some hosts have to a net, draining it cuts those hosts off just as the reload does: its
#: reload is a file system outage for those nets (named, from the plan's routes: diff's
#: ``Paths``), and its step says so instead of "drain it first".  Without the paths (a result
#: built by hand) the step says both, for the administrator to tell.
SERVER_RELOAD_OUTAGE = (
    "outage of the server's targets: the new values take effect only when LNet is unloaded and "
    "loaded again with the new files -- unmount the targets (or fail them over to the "
    "partner) first"
)
#: A router whose nets all keep other gateways.
ROUTER_RELOAD_OUTAGE = (
    "router outage, paths kept: the new values take effect only when LNet is unloaded and "
    "loaded again with the new files -- drain it first (`lnetctl set routing 0`, until its "
    "peers stop choosing it), never all the gateways of a net at once: every host routing "
    "through it has another gateway to each of its nets"
)
#: Routers reloaded in waves (``lnetgen.diff.paths.reload_waves``): wave ``{k}`` of ``{n}``.
ROUTER_RELOAD_WAVE = (
    "router outage, paths kept, wave {k} of {n}: the new values take effect only when LNet is "
    "unloaded and loaded again with the new files -- drain these routers together (`lnetctl "
    "set routing 0`, until their peers stop choosing them), reload LNet on them{then} (every "
    "host keeps at least half of its gateways at the best priority to each of its nets up "
    "during a wave, and a net with one such gateway uses its backup routes while it reloads)"
)
#: The end of a wave's text before the next wave.
WAVE_THEN = ", and start wave {k} only once they forward again"
#: How a drained router takes files that need LNet loaded again (lustre-release's lnet.service:
#: ExecStop lustre_rmmod, ExecStart modprobe lnet, lnetctl lnet configure, lnetctl import
#: /etc/lnet.conf); routing comes back on from the files.
RELOAD_ROUTER = (
    "# with the new files in place, once its peers stop choosing it: reload LNet (lnet.service: "
    "`systemctl restart lnet` unloads the modules and imports /etc/lnet.conf again); routing "
    "comes back on from the files -- check `lnetctl routing show` before the next wave"
)


#: A router that is the only gateway some hosts have to ``{nets}``.
ROUTER_RELOAD_CUT = (
    "file system outage: the new values take effect only when LNet is unloaded and loaded "
    "again with the new files, and this router is the only gateway some hosts have to {nets}: "
    "those paths are down until LNet is back on it, and draining it (`lnetctl set routing 0`) "
    "would cut them at once as well -- stop the I/O of those hosts first (or give those nets "
    "another gateway first)"
)
#: A router whose peers' other gateways are not known (no paths).
ROUTER_RELOAD_UNKNOWN = (
    "router outage: the new values take effect only when LNet is unloaded and loaded again "
    "with the new files -- drain it first (`lnetctl set routing 0`, until its peers stop "
    "choosing it) if every host routing through it has another gateway to its nets: a net it "
    "is the only gateway of is cut off until LNet is back on it, drained or not"
)
CLIENT_RELOAD_OUTAGE = (
    "host outage: the new values take effect only when LNet is unloaded and loaded again with "
    "the new files -- unmount Lustre on these clients first"
)


#: Tunables lnetctl sets on a running node (lnetctl set KEY VALUE).
_LNETCTL_SET = {
    "transaction_timeout": "transaction_timeout",
    "retry_count": "retry_count",
    "drop_asym_route": "drop_asym_route",
    "health_sensitivity": "health_sensitivity",
    "response_tracking": "response_tracking",
    "recovery_limit": "recovery_limit",
    "max_recovery_ping_interval": "max_recovery_ping_interval",
    "tiny_router_buffers": "tiny_buffers",
    "small_router_buffers": "small_buffers",
    "large_router_buffers": "large_buffers",
}
#: lnet module parameters writable at run time (0644 in lnet/lnet/router.c).
_SYSFS = ("alive_router_check_interval", "router_ping_timeout")


#: health_sensitivity before retry_count: the kernel refuses a nonzero retry count while
#: health is off (api-ni.c retry_count_set()), so a host turning health back on needs it first.
_FIRST = {"health_sensitivity": 0, "transaction_timeout": 1, "retry_count": 2}


def _in_order(d: HostDiff) -> list[tuple[str, int | None, int | None]]:
    """The changed tunables, health_sensitivity, transaction_timeout and retry_count first,
    then by name."""
    return sorted(d.tunables, key=lambda t: (_FIRST.get(t[0], 3), t[0]))


def reload_tunables(d: HostDiff) -> list[str]:
    """The changed tunables that take effect only when LNet is loaded again with the new
    files: per-NI credits, check_routers_before_use, and settings to remove."""
    return [
        f"{name} (remove)" if want is None else name
        for name, _have, want in _in_order(d)
        if want is None or (name not in _LNETCTL_SET and name not in _SYSFS)
    ]


def tunable_sets(d: HostDiff) -> list[str]:
    """Set the changed tunables: lnetctl where it can, sysfs for the writable module
    parameters; the rest (``reload_tunables``) only take effect when LNet is loaded again
    with the new files, and their step is an outage (``reload_outage``)."""
    out = []
    for name, _have, want in _in_order(d):
        if want is None:
            continue
        if name in _LNETCTL_SET:
            out.append(f"lnetctl set {_LNETCTL_SET[name]} {want}")
        elif name in _SYSFS:
            out.append(f"echo {want} > /sys/module/lnet/parameters/{name}")
    later = reload_tunables(d)
    if later:
        out.append(
            f"# {', '.join(later)}: take effect when LNet is loaded again with the new files"
        )
    return out


def reload_outage(
    diffs: Iterable[HostDiff],
    sole: tuple[str, ...] | None = None,
    wave: tuple[int, int] = (0, 0),
) -> str:
    """What a tunables step interrupts when a tunable of its hosts takes effect only when LNet
    is loaded again (one text per role among them, servers first); empty when it runs live.
    ``sole``: the nets the step's routers are the only gateway to for some host (empty: none;
    None: not known); ``wave``: (k, n) when its routers are wave k of n (0: not in waves)."""
    roles = {d.role for d in diffs if reload_tunables(d)}
    k, n = wave
    if sole is None:
        router = ROUTER_RELOAD_UNKNOWN
    elif sole:
        router = ROUTER_RELOAD_CUT.format(nets=", ".join(sole))
    elif k:
        then = WAVE_THEN.format(k=k + 1) if k < n else ""
        router = ROUTER_RELOAD_WAVE.format(k=k, n=n, then=then)
    else:
        router = ROUTER_RELOAD_OUTAGE
    texts = {SERVER: SERVER_RELOAD_OUTAGE, ROUTER: router, CLIENT: CLIENT_RELOAD_OUTAGE}
    return "; ".join(texts[role] for role in (SERVER, ROUTER, CLIENT) if role in roles)
