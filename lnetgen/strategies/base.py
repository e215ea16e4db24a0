"""What a strategy returns, and helpers the strategies share (leaf modules, net numbering)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.model import Router, Server, Site

Module = tuple[str, str]  # (switch, leaf); leaf '' on a TOR switch


class SolveError(InputError):
    """The site cannot be solved with this strategy; diagnostics say why.  The solver lists
    the first 20 guarantee failures, then one diagnostic saying how many more (``more``, one
    of ``diagnostics``): ``unlisted`` is that count."""

    def __init__(
        self, diagnostics: Iterable[Diagnostic], more: Diagnostic | None = None, unlisted: int = 0
    ) -> None:
        super().__init__(diagnostics)
        self.more, self.unlisted = more, unlisted


def solve_error(site: Site, code: str, message: str, path: str = "$") -> SolveError:
    return SolveError([Diagnostic(site.file, 0, 0, "error", code, path, message)])


@dataclass
class NetSpec:
    """One storage LNet as a strategy designs it.

    ``routers`` are the gateways clients use at priority 0 (all of them, or one per client when
    ``choice`` is set: ``choice[i]`` indexes ``routers`` for client ``i`` and the others become
    priority-``set_backup_priority`` alternates).  ``backup`` routers are reached at
    ``backup_priority`` and get an interface on this net so the route is alive.
    """

    servers: list[Server]
    routers: list[Router]
    module: Module | None
    group: str = ""
    backup: list[Router] = field(default_factory=list)
    backup_priority: int = 1
    choice: npt.NDArray[np.int32] | None = None
    set_backup_priority: int = 1
    why: str = ""

    @property
    def fs(self) -> str:
        fss = {s.fs for s in self.servers}
        return fss.pop() if len(fss) == 1 else ""


@dataclass(frozen=True)
class Strategy:
    name: str
    summary: str
    design: Callable[[Site], list[NetSpec]]
    leaf_local: bool = True


def label(module: Module) -> str:
    return f"{module[0]}/{module[1]}" if module[1] else module[0]


def modules(site: Site) -> list[tuple[Module, list[Server], list[Router]]]:
    """Leaf modules (or TOR switches) holding servers, in inventory order, with their hosts."""
    order: dict[Module, int] = {}
    for fabric in site.fabrics:
        for sw in fabric.switches:
            for leaf in sw.leaves:
                order[(sw.name, leaf.name)] = len(order)
    srv: dict[Module, list[Server]] = defaultdict(list)
    rtr: dict[Module, list[Router]] = defaultdict(list)
    for s in site.servers:
        srv[s.attach.module].append(s)
    for r in site.routers:
        rtr[r.attach.module].append(r)
    out = []
    for m in sorted(srv, key=lambda m: order.get(m, len(order))):
        servers = sorted(srv[m], key=_server_key)
        if not rtr.get(m):
            raise solve_error(
                site, "E-LEAF-NO-ROUTER", f"leaf {label(m)} holds servers but no router"
            )
        out.append((m, servers, list(rtr[m])))
    return out


def _server_key(s: Server) -> tuple[int, str, str]:
    # MDS before OSS within a leaf, then by file system and name
    return (0 if s.role == "mds" else 1, s.fs, s.name)


def leaf_sets(
    site: Site,
    pick: Callable[[npt.NDArray[np.intp], list[Router]], npt.NDArray[np.integer]],
    why: str,
) -> list[NetSpec]:
    """One storage net per leaf module whose clients each get one of the module's routers.

    ``pick(members, routers)`` chooses, for the clients ``members`` of one client net (indices
    in inventory order), an index into ``routers`` (the module's routers on that net).  ``why``
    is formatted with ``{leaf}``.
    """
    net = site.clients.net_index
    specs: list[NetSpec] = []
    for module, servers, routers in modules(site):
        choice = np.zeros(len(net), dtype=np.int32)
        for k, cnet in enumerate(site.clients.nets):
            idx = [j for j, r in enumerate(routers) if r.client_net == cnet]
            members = np.nonzero(net == k)[0]
            if not idx or not len(members):
                continue  # the coverage check reports a net without a gateway
            chosen = pick(members, [routers[j] for j in idx])
            choice[members] = np.asarray(idx, dtype=np.int32)[chosen]
        specs.append(
            NetSpec(
                servers,
                routers,
                module,
                group=label(module),
                choice=choice,
                why=why.format(leaf=label(module)),
            )
        )
    return specs
