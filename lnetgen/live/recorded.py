"""The NIDs a generated tree records for its routers and servers, which stand for their live
NIDs when the tree is diffed as the live state.

``lnetgen generate`` writes lnetctl and modprobe files that name interfaces, never addresses
(LNet takes a NID from its interface), so the files alone show no NID.  The tree records them
in its ``manifest.json`` instead: ``routers`` (router -> NIDs) and, per file system, each
server's ``nids``.  Diffing an earlier tree against an edited inventory is meant to show what
the edit changes; a moved address is the change that needs an outage, so these recorded NIDs
are the live side of that comparison (a host whose file shows NIDs of its own keeps them).

Decision, as an administrator would expect it: the recorded NIDs are trusted only as far as
the tree is what lnetgen wrote --

* only from a manifest that ``lnetgen generate`` wrote (``lnetgen_version`` present, its kind
  ``generate``; a ``collect`` tree's dumps carry their own NIDs, and a hand-made manifest
  listing dumps vouches for nothing);
* only for hosts whose file still has the sha256 the manifest records: a file changed since is
  no longer the one the record describes, so its hosts' NIDs are not compared, and a health
  note says so.

Clients are recorded as classes without NIDs: their NIDs are not compared.  A malformed
``routers`` or ``filesystems`` section of lnetgen's own manifest makes PATH unusable
(``E-LIVE-PATH``, exit 2), located at its line and JSON path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from lnetgen import jsonloc, nodes
from lnetgen.diagnostics import Diagnostic, InputError, json_path
from lnetgen.live.errors import clip
from lnetgen.live.state import HostState, NetTable
from lnetgen.write import manifest_kind

#: host -> net -> the NIDs recorded on that net (first port first)
Recorded = dict[str, dict[str, tuple[str, ...]]]


def _bad(mpath: str, text: str, where: tuple[str | int, ...], message: str) -> InputError:
    diag = Diagnostic(mpath, 0, 0, "error", "E-LIVE-PATH", json_path(where), clip(message, 300))
    return InputError(jsonloc.placed([diag], mpath, text))


def _host_nids(
    out: Recorded, host: object, nids: object, mpath: str, text: str, where: tuple[str | int, ...]
) -> None:
    """Record ``nids`` (a list of NID texts) for ``host`` unless it has some already."""
    if not isinstance(host, str) or nodes.HOSTNAME_RE.match(host) is None:
        raise _bad(mpath, text, where, f"'{clip(str(host))}' is not a host name")
    if not isinstance(nids, list) or not all(isinstance(n, str) for n in nids):
        raise _bad(mpath, text, where, "should be a list of NIDs")
    if host in out:  # a server of several file systems (an MGS) is listed in each
        return
    by_net: dict[str, list[str]] = {}
    for i, n in enumerate(nids):
        try:
            nid = nodes.parse_nid(n)
        except nodes.NodeSyntaxError as exc:
            raise _bad(mpath, text, (*where, i), f"'{clip(n)}' is not a NID: {exc}") from None
        by_net.setdefault(str(nid.net), []).append(str(nid))
    out[host] = {net: tuple(v) for net, v in by_net.items()}


def recorded_nids(doc: object, text: str, mpath: str) -> Recorded:
    """host -> net -> NIDs the generate manifest ``doc`` (whose text is ``text``) records for
    routers and servers; empty for any other manifest.  Raises ``InputError`` (``E-LIVE-PATH``)
    when lnetgen's own ``routers`` or ``filesystems`` section is malformed."""
    if not isinstance(doc, dict) or "lnetgen_version" not in doc:
        return {}
    if manifest_kind(doc) != "generate":
        return {}
    out: Recorded = {}
    routers = doc.get("routers", {})
    if not isinstance(routers, dict):
        raise _bad(mpath, text, ("routers",), "should map router names to lists of NIDs")
    for name, nids in routers.items():
        _host_nids(out, name, nids, mpath, text, ("routers", name))
    fss = doc.get("filesystems", {})
    if not isinstance(fss, dict):
        raise _bad(mpath, text, ("filesystems",), "should map file system names to objects")
    for fs, obj in fss.items():
        servers = obj.get("servers") if isinstance(obj, dict) else None
        if not isinstance(servers, list):
            raise _bad(mpath, text, ("filesystems", fs), "should be an object with 'servers'")
        for i, s in enumerate(servers):
            where: tuple[str | int, ...] = ("filesystems", fs, "servers", i)
            if not isinstance(s, dict):
                raise _bad(mpath, text, where, "a server should be an object")
            _host_nids(out, s.get("name"), s.get("nids"), mpath, text, (*where, "nids"))
    return out


def changed_note(rel: str) -> str:
    """The health note for the hosts of a file changed since lnetgen wrote it."""
    return (
        f"{rel} differs from the file lnetgen wrote (its sha256 is not the one manifest.json "
        "records): the NIDs the manifest records for its hosts are not compared"
    )


def with_nids(state: HostState, nids: Mapping[str, tuple[str, ...]]) -> HostState:
    """``state`` showing the recorded ``nids``, unless its networks are not shown or its dump
    shows NIDs of its own (those are what the host runs)."""
    nets = state.nets
    if nets is None or nets.nids or not nids:
        return state
    return dataclasses.replace(state, nets=NetTable(nets.nets, nids, nets.health, nets.tunables))


def with_note(state: HostState, note: str) -> HostState:
    """``state`` with one more health note."""
    return dataclasses.replace(state, health=(*state.health, note))
