"""The changes of a diff as ordered ``lnetctl`` steps per node set (``plan_changes``).

The order keeps every host's paths while the change rolls out: new networks and routes first
(routers, then servers' return routes, then clients), routers drained (``lnetctl set routing
0``) before their routes or networks go, removals last.

A command holds values of the live dumps (the interfaces a net is to lose), which nothing but
the host checked: each argument is quoted for a POSIX shell (an interface ``x; reboot`` stays
one argument of ``lnetctl``; names of letters, digits and ``@%+=:,./-`` are left as they are),
and a command with a character that does not print (a control character, a bidi override that
shows the line other than it runs) is not given to run: it becomes a ``#`` comment saying so,
its text escaped (``refused``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from lnetgen import nodes
from lnetgen.diagnostics import printable
from lnetgen.diff.result import (
    CLIENT,
    ROUTER,
    SERVER,
    DiffResult,
    Group,
    HostDiff,
    natural,
    role_rank,
)
from lnetgen.live import UNDEFINED_HOP


@dataclass(frozen=True)
class Step:
    """One ordered step: run ``commands`` on every host of ``hosts``."""

    number: int
    title: str
    hosts: str
    count: int
    commands: tuple[str, ...]
    outage: str = ""  # empty: runs live; else what the step interrupts and why


#: A NID change cannot be made live: servers' NIDs are recorded in the file system's
#: configuration logs, other hosts must restart LNet to take a new interface address.
SERVER_NID_OUTAGE = (
    "file system outage: a server's NID is in the configuration logs -- unmount the targets and "
    "run `lctl replace_nids` on the MGS (or a writeconf) before they come back"
)
HOST_NID_OUTAGE = (
    "host outage: LNet takes the new address only when restarted (`lnetctl lnet unconfigure` "
    "and configure); drain routers and idle clients first"
)


#: A tunable that takes effect only when LNet is loaded again (per-NI credits such as
#: ``o2ib.peer_credits``, the LND module options, ``check_routers_before_use``, a setting to
#: remove) is no live change either, like a NID change: LNet must be unloaded and loaded again
#: with the new files on that host.  A router is drained first so that its peers stop choosing
#: it; a server's targets are out while it reloads (unless failed over to the partner); a
#: client's mounts must go.  Steps that only run ``lnetctl set`` or write a run-time module
#: parameter stay live.
SERVER_RELOAD_OUTAGE = (
    "outage of the server's targets: the new values take effect only when LNet is unloaded and "
    "loaded again with the new files -- unmount the targets (or fail them over to the "
    "partner) first"
)
ROUTER_RELOAD_OUTAGE = (
    "router outage: the new values take effect only when LNet is unloaded and loaded again with "
    "the new files -- drain it first (`lnetctl set routing 0`, until its peers stop choosing it)"
)
CLIENT_RELOAD_OUTAGE = (
    "host outage: the new values take effect only when LNet is unloaded and loaded again with "
    "the new files -- unmount Lustre on these clients first"
)
_RELOAD_OUTAGE = {SERVER: SERVER_RELOAD_OUTAGE, ROUTER: ROUTER_RELOAD_OUTAGE}


#: The comment a command with a character that does not print becomes (its text escaped).
REFUSED = "# refused: a value of the live dump here holds characters that do not print: "


def _q(value: object) -> str:
    """One argument of a command, quoted for a POSIX shell when it needs it."""
    return shlex.quote(str(value))


def refused(command: str) -> str:
    """``command`` when all of it prints; else the ``REFUSED`` comment showing it escaped."""
    return command if command.isprintable() else REFUSED + printable(command)


def route_add(net: str, gateway: str, hop: int, priority: int) -> str:
    hop_opt = f" --hop {hop}" if hop != UNDEFINED_HOP else ""
    return (
        f"lnetctl route add --net {_q(net)} --gateway {_q(gateway)}{hop_opt} --priority {priority}"
    )


def route_del(net: str, gateway: str) -> str:
    return f"lnetctl route del --net {_q(net)} --gateway {_q(gateway)}"


def _net_add(net: str, ifaces: Iterable[str]) -> str:
    ifs = ",".join(ifaces)
    return f"lnetctl net add --net {_q(net)}" + (f" --if {_q(ifs)}" if ifs else "")


def _adds_nets(d: HostDiff) -> list[str]:
    out = [_net_add(n, i) for n, i in d.add_nets]
    for net, have, want in d.change_nets:
        new = [i for i in want if i not in have]
        if new:
            out.append(_net_add(net, new))
    return out


def _removes_nets(d: HostDiff) -> list[str]:
    out: list[str] = []
    for net, have, want in d.change_nets:
        out.extend(f"lnetctl net del --net {_q(net)} --if {_q(i)}" for i in have if i not in want)
    out.extend(f"lnetctl net del --net {_q(n)}" for n, _i in d.remove_nets)
    return out


def _drains(d: HostDiff) -> bool:
    """Whether a host must stop forwarding (``set routing 0``) before its removals.  A router
    that does not forward yet (routing to be enabled) has nothing to drain."""
    if d.routing == "enable":
        return False
    if d.role == ROUTER:
        return bool(
            d.routing == "disable"
            or d.remove_nets
            or d.remove_routes
            or any(set(h) - set(w) for _n, h, w in d.change_nets)
        )
    return d.routing == "disable"


def _nid_notes(d: HostDiff) -> list[str]:
    return [
        f"# {net}: the interface gives NID {', '.join(have)}; the inventory says {nid} "
        "(set the interface address; LNet takes the NID from it)"
        for net, have, nid in d.nids
    ]


def _route_adds(d: HostDiff) -> list[str]:
    return [route_add(*r) for r in d.add_routes]


def _route_dels(d: HostDiff) -> list[str]:
    return [route_del(r[0], r[1]) for r in d.remove_routes]


def _route_replaces(d: HostDiff) -> list[str]:
    return [
        c
        for r in d.change_routes
        for c in (route_del(r[0], r[1]), route_add(r[0], r[1], r[4], r[5]))
    ]


def _udsp_adds(d: HostDiff) -> list[str]:
    return [
        "lnetctl udsp add "
        + " ".join(
            f"--{k} {_q(v)}" for k, v in (("src", r.src), ("dst", r.dst), ("rte", r.rte)) if v
        )
        + f" --priority {r.priority}"
        for r in d.add_udsp
    ]


def _udsp_dels(d: HostDiff) -> list[str]:
    """Highest position first: deleting a rule moves the ones after it up."""
    return [f"lnetctl udsp del --idx {i}" for i, _ in sorted(d.remove_udsp, reverse=True)]


#: The commands one phase runs on a host with these changes (none: the host sits it out).
_Commands = Callable[[HostDiff], list[str]]


def _on(role: str, commands: _Commands) -> _Commands:
    """``commands`` on hosts of ``role`` only."""
    return lambda d: commands(d) if d.role == role else []


def _not_on(role: str, commands: _Commands) -> _Commands:
    """``commands`` on hosts of every role but ``role``."""
    return lambda d: commands(d) if d.role != role else []


#: Tunables lnetctl sets on a running node (lnetctl set KEY VALUE).
_LNETCTL_SET = {
    "transaction_timeout": "transaction_timeout",
    "retry_count": "retry_count",
    "drop_asym_route": "drop_asym_route",
    "tiny_router_buffers": "tiny_buffers",
    "small_router_buffers": "small_buffers",
    "large_router_buffers": "large_buffers",
}
#: lnet module parameters writable at run time (0644 in lnet/lnet/router.c).
_SYSFS = ("alive_router_check_interval", "router_ping_timeout")


_FIRST = {"transaction_timeout": 0, "retry_count": 1}


def _in_order(d: HostDiff) -> list[tuple[str, int | None, int | None]]:
    """The changed tunables, transaction_timeout and retry_count first, then by name."""
    return sorted(d.tunables, key=lambda t: (_FIRST.get(t[0], 2), t[0]))


def _reload_tunables(d: HostDiff) -> list[str]:
    """The changed tunables that take effect only when LNet is loaded again with the new
    files: per-NI credits, check_routers_before_use, and settings to remove."""
    return [
        f"{name} (remove)" if want is None else name
        for name, _have, want in _in_order(d)
        if want is None or (name not in _LNETCTL_SET and name not in _SYSFS)
    ]


def _tunable_sets(d: HostDiff) -> list[str]:
    """Set the changed tunables: lnetctl where it can, sysfs for the writable module
    parameters; the rest (``_reload_tunables``) only take effect when LNet is loaded again
    with the new files, and their step is an outage (``reload_outage``)."""
    out = []
    for name, _have, want in _in_order(d):
        if want is None:
            continue
        if name in _LNETCTL_SET:
            out.append(f"lnetctl set {_LNETCTL_SET[name]} {want}")
        elif name in _SYSFS:
            out.append(f"echo {want} > /sys/module/lnet/parameters/{name}")
    later = _reload_tunables(d)
    if later:
        out.append(
            f"# {', '.join(later)}: take effect when LNet is loaded again with the new files"
        )
    return out


def _nid_outage(groups: list[Group]) -> str:
    """A NID change is never live (``SERVER_NID_OUTAGE``, ``HOST_NID_OUTAGE``)."""
    return SERVER_NID_OUTAGE if any(g.diff.role == SERVER for g in groups) else HOST_NID_OUTAGE


def reload_outage(groups: list[Group]) -> str:
    """What a tunables step interrupts when a tunable of its hosts takes effect only when LNet
    is loaded again (one text per role among them, servers first); empty when it runs live."""
    roles = {g.diff.role for g in groups if _reload_tunables(g.diff)}
    return "; ".join(
        _RELOAD_OUTAGE.get(role, CLIENT_RELOAD_OUTAGE)
        for role in (SERVER, ROUTER, CLIENT)
        if role in roles
    )


#: (title, commands) in the order they run.
_PHASES: tuple[tuple[str, _Commands], ...] = (
    ("fix interface addresses (outside LNet)", _nid_notes),
    ("add networks on routers", _on(ROUTER, _adds_nets)),
    (
        "enable routing on routers",
        lambda d: ["lnetctl set routing 1"] if d.routing == "enable" else [],
    ),
    ("add networks on servers and clients", _not_on(ROUTER, _adds_nets)),
    ("add routes on servers (return paths before clients use them)", _on(SERVER, _route_adds)),
    ("add routes on clients", _on(CLIENT, _route_adds)),
    ("remove old UDSP rules on clients", _on(CLIENT, _udsp_dels)),
    ("add UDSP rules on clients (after the routes they prefer)", _on(CLIENT, _udsp_adds)),
    ("add routes on routers", _on(ROUTER, _route_adds)),
    ("replace changed routes (LNet cannot change hop or priority in place)", _route_replaces),
    (
        "drain routers before their routes and networks go",
        lambda d: ["lnetctl set routing 0"] if _drains(d) else [],
    ),
    ("remove old routes on clients", _on(CLIENT, _route_dels)),
    ("remove old routes on servers", _on(SERVER, _route_dels)),
    (
        "remove old routes and networks on drained routers",
        _on(ROUTER, lambda d: _route_dels(d) + _removes_nets(d)),
    ),
    (
        "re-enable routing on drained routers that stay routers",
        lambda d: (
            ["lnetctl set routing 1"]
            if d.role == ROUTER and _drains(d) and d.routing != "disable"
            else []
        ),
    ),
    ("remove old networks on servers and clients", _not_on(ROUTER, _removes_nets)),
    # last: drop_asym_route only once the routes on both sides are symmetric
    ("set LNet tunables", _tunable_sets),
)
#: What a phase's step interrupts, by its commands (the other phases run live).
_OUTAGES: dict[_Commands, Callable[[list[Group]], str]] = {
    _nid_notes: _nid_outage,
    _tunable_sets: reload_outage,
}


def plan_changes(result: DiffResult) -> list[Step]:
    """The changes of ``result`` as ordered lnetctl steps per node set (empty when equal).

    Within a step, groups that run the same commands are merged into one node set.
    """
    steps: list[Step] = []
    number = 0
    for title, make in _PHASES:
        by_cmds: dict[tuple[str, ...], list[Group]] = {}
        for g in result.groups:
            cmds = tuple(refused(c) for c in make(g.diff))
            if cmds:
                by_cmds.setdefault(cmds, []).append(g)
        if not by_cmds:
            continue
        number += 1
        items = []
        for cmds, gs in by_cmds.items():
            hosts = (
                gs[0].hosts
                if len(gs) == 1
                else nodes.fold(n for g in gs for n in nodes.expand(g.hosts))
            )
            role = min(role_rank(g.diff.role) for g in gs)
            outage = _OUTAGES[make](gs) if make in _OUTAGES else ""
            step = Step(number, title, hosts, sum(g.count for g in gs), cmds, outage)
            items.append((role, natural(hosts), step))
        steps.extend(s for _r, _n, s in sorted(items, key=lambda t: (t[0], t[1])))
    return steps
