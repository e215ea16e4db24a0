"""The fine-grained-routing guarantees of a plan read with ``--plan``, located in its file.

``lnetgen solve`` proves the guarantees (``lnetgen.guarantees.check_guarantees``) on every plan
before it returns it; a reviewed ``plan.json`` read back must pass the same proof before any
command uses it.  An administrator who edits a route's gateway to a NID no router has (or to a
router without an interface on the target net) expects ``generate --plan`` to refuse the plan
at the value they changed, as it refuses any other hand edit, not to write client routes
through a gateway that does not exist (and to drop ``lnet_drop_asym_route``, whose proof then
fails, without a word).  The proof is the solver's own, with the strategy the plan names (the
baseline strategy does not keep its gateways on the storage leaf) and the inventory's MGS
servers; each broken guarantee is ``E-PLAN`` at the JSON path of the value it names (the first
route through the gateway, the class, server, server route table or router), exit 2.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from typing import Any

from lnetgen import strictjson
from lnetgen.bounded import read_at_most
from lnetgen.diagnostics import Diagnostic, UsageError, json_path
from lnetgen.guarantees import check_guarantees
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.solve import mgs_servers
from lnetgen.strategies import REGISTRY

JsonPath = tuple[str | int, ...]
#: How many broken guarantees are reported (the rest are counted).
MAX_SHOWN = 10
#: A word of a guarantee's message: a name, node set or NID, without the punctuation around it.
_WORD = re.compile(r"[^\s,:;()]+")


def check_plan(plan: Plan, site: Site, plan_path: str, max_bytes: int) -> None:
    """Raise ``UsageError`` (``E-PLAN``, one diagnostic per broken guarantee, at most
    ``MAX_SHOWN``) when ``plan``, read from ``plan_path``, breaks a guarantee the solver proves.
    The MGS servers checked are those of ``site`` that the plan has (a plan forced onto a
    changed inventory is checked for the hosts it has)."""
    strategy = REGISTRY.get(plan.strategy)
    have = {s.name for s in plan.servers}
    mgs = {fs: [n for n in names if n in have] for fs, names in mgs_servers(site).items()}
    problems = check_guarantees(plan, leaf_local=strategy.leaf_local if strategy else True, mgs=mgs)
    if not problems:
        return
    doc = _document(plan_path, max_bytes)
    diags = [
        Diagnostic(
            plan_path,
            0,
            0,
            "error",
            "E-PLAN",
            json_path(_where(doc, problem)),
            f"the plan breaks a guarantee lnetgen proves on every plan it solves: {problem}",
            hint="solve again (lnetgen solve --out), or undo the edit",
        )
        for problem in problems[:MAX_SHOWN]
    ]
    if len(problems) > MAX_SHOWN:
        more = f"and {len(problems) - MAX_SHOWN} more broken guarantee(s)"
        diags.append(Diagnostic(plan_path, 0, 0, "error", "E-PLAN", "$", more))
    raise UsageError(diags)


def _document(path: str, max_bytes: int) -> dict[str, Any]:
    """The JSON document of the plan at ``path`` (read again, only to locate an error); empty
    when it cannot be read again."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return {}
            doc = strictjson.loads(read_at_most(fh, max_bytes).decode("utf-8"))
    except (OSError, ValueError, strictjson.JSONError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _items(doc: dict[str, Any], key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    items = doc.get(key)
    for i, item in enumerate(items if isinstance(items, list) else ()):
        if isinstance(item, dict):
            yield i, item


def _routes(doc: dict[str, Any]) -> Iterator[tuple[JsonPath, str, dict[str, Any]]]:
    """Every route of the plan: its path, the net of the hosts of its table, the route."""
    for key in ("route_sets", "client_classes", "server_routes"):
        own = "client_net" if key == "route_sets" else "net"
        for i, table in _items(doc, key):
            for j, r in _items(table, "routes"):
                yield (key, i, "routes", j), str(table.get(own)), r


def _where(doc: dict[str, Any], problem: str) -> JsonPath:
    """The JSON path of the value ``problem`` is about: a gateway NID it names (its first
    route); else the table of the servers on a net; else the first it names of a router (with
    a net named after it: its first route through that router to or from that net), a client
    class, a server or a server route table (by its node set); ``()`` (the whole plan) when it
    names none."""
    gateways: dict[str, JsonPath] = {}
    for at, _own, r in _routes(doc):
        gateways.setdefault(str(r.get("gateway")), (*at, "gateway"))
    named: dict[str, JsonPath] = {}
    routers: dict[str, tuple[int, set[str]]] = {}
    for i, r in _items(doc, "routers"):
        routers[str(r.get("name"))] = (i, set(map(str, r.get("nids") or ())))
    for key in ("client_classes", "servers", "routers"):
        for i, item in _items(doc, key):
            named.setdefault(str(item.get("name")), (key, i))
    for i, sr in _items(doc, "server_routes"):
        named.setdefault(str(sr.get("servers")), ("server_routes", i))
    words = _WORD.findall(problem)
    nets = {str(sr.get("net")): i for i, sr in reversed(list(_items(doc, "server_routes")))}
    for k, word in enumerate(words[:-2]):
        if (word, words[k + 1]) == ("servers", "on") and words[k + 2] in nets:
            return ("server_routes", nets[words[k + 2]])  # their table to every client net
    gateway = next((w for w in words if w in gateways), None)
    if gateway is not None:
        return gateways[gateway]
    for k, word in enumerate(words):
        if word in routers:
            return _through(doc, routers[word], set(words[k + 1 :]))
        if word in named:
            return named[word]
    return ()


def _through(doc: dict[str, Any], router: tuple[int, set[str]], words: set[str]) -> JsonPath:
    """The first route through ``router`` (its index and NIDs) to or from a net of ``words``,
    else the router."""
    index, nids = router
    for at, own, r in _routes(doc):
        if str(r.get("gateway")) in nids and (str(r.get("net")) in words or own in words):
            return (*at, "gateway")
    return ("routers", index)
