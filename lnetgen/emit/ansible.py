"""Ansible: an inventory, LNet variables named as ``stackhpc/ansible-role-lustre`` names them,
and a small role of our own that writes ``/etc/lnet.conf`` and ``/etc/modprobe.d/lnet.conf``.

Everything lands under ``ansible/``:

* ``inventory.yml``: groups ``lnet_clients`` (whose children are one ``lnet_class_*`` group per
  client class), ``lnet_routers`` and ``lnet_servers``; hosts in Ansible's range syntax
  (``nid[00001:18688]``, one range per bracket);
* ``group_vars/<class group>/lnet.yml`` per client class and ``host_vars/<host>/lnet.yml`` per
  router and server, so every host gets its variables from exactly one file;
* ``group_vars/all/lnetgen.yml``: the provenance header the role writes at the top of each file;
* ``site.yml``, ``ansible.cfg`` and ``roles/lnet/``: copied unchanged from ``templates/ansible/``.

The role's templates reproduce ``lnetctl/*.yaml`` and ``modprobe/*.conf`` byte for byte from
these variables.  When the modprobe emitter would skip the site (a ``routes=`` or
``networks=`` over the 1024-byte module parameter limit), every ``lustre_lnet_module_*``
variable is left out for every host, and the role writes no modprobe file anywhere.

Net names used as keys (``lustre_lnet_lnetctl_networks``, ``lustre_lnet_lnetctl_routes``) carry
an explicit number, ``o2ib0`` rather than ``o2ib``: stackhpc's ``lnet_routes`` module appends
``0`` to unnumbered nets it reads back from ``lnetctl route show``, and would otherwise delete
and re-add those routes on every run.  The role prints the canonical spelling.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import yaml

from lnetgen import nodes, routestr
from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.emit import modprobe
from lnetgen.emit.base import Context, OutFile
from lnetgen.plan import Route
from lnetgen.resources import data_dir

FORMAT = "ansible"

#: Top-level groups, in inventory order.
CLIENTS, ROUTERS, SERVERS = "lnet_clients", "lnet_routers", "lnet_servers"
#: Prefix of the per-class groups (children of ``lnet_clients``).
CLASS_PREFIX = "lnet_class_"
#: Separators the role's modprobe template joins the list variables with.
NETWORKS_SEP, ROUTES_SEP = ",", "; "

_NOT_GROUP_CHAR = re.compile(r"[^A-Za-z0-9_]")
_ROOT = "ansible"


class _Dumper(yaml.SafeDumper):
    """Block style, lists indented under their key, ``None`` as an empty value (host entries)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _none(dumper: yaml.SafeDumper, _value: None) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:null", "")


_Dumper.add_representer(type(None), _none)


def _yaml(header_lines: Sequence[str], doc: dict[str, Any]) -> str:
    out = ["".join(f"# {line}\n" for line in header_lines), "---\n"]
    _emit_map(doc, 0, out)
    return "".join(out)


# A hand-written block emitter for the shapes these files hold (mappings, lists, scalars):
# PyYAML's pure-Python emitter took minutes for a site with 17,000 client classes.  Scalars
# are still spelled by PyYAML itself (cached), so quoting is exactly what yaml.dump would do,
# and the layout is ``_Dumper``'s: lists indented under their key.


@functools.lru_cache(maxsize=1 << 16)
def _scalar_text(value: str | int | bool | None) -> str:
    if value is None:
        return ""
    text = yaml.dump(value, Dumper=_Dumper, allow_unicode=True, width=1 << 30)
    return text.removesuffix("\n").removesuffix("\n...").removesuffix("\n")


def _emit_map(doc: dict[str, Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for key, value in doc.items():
        k = _scalar_text(key)
        if isinstance(value, dict):
            if not value:
                out.append(f"{pad}{k}: {{}}\n")
                continue
            out.append(f"{pad}{k}:\n")
            _emit_map(value, indent + 2, out)
        elif isinstance(value, list):
            if not value:
                out.append(f"{pad}{k}: []\n")
                continue
            out.append(f"{pad}{k}:\n")
            _emit_list(value, indent + 2, out)
        else:
            text = _scalar_text(value)
            out.append(f"{pad}{k}: {text}\n" if text else f"{pad}{k}:\n")


def _emit_list(items: list[Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if isinstance(item, dict) and item:
            first = True
            for key, value in item.items():
                lead = f"{pad}- " if first else f"{pad}  "
                first = False
                k = _scalar_text(key)
                if isinstance(value, dict | list) and value:
                    out.append(f"{lead}{k}:\n")
                    if isinstance(value, dict):
                        _emit_map(value, indent + 4, out)
                    else:
                        _emit_list(value, indent + 4, out)
                else:
                    text = (
                        _scalar_text(value)
                        if not isinstance(value, dict | list)
                        else ("{}" if isinstance(value, dict) else "[]")
                    )
                    out.append(f"{lead}{k}: {text}\n" if text else f"{lead}{k}:\n")
        elif isinstance(item, list):
            raise ValueError("nested lists are not used in lnetgen's Ansible files")
        else:
            out.append(f"{pad}- {_scalar_text(item)}\n")


def group_name(class_name: str) -> str:
    """The Ansible group of a client class (``clients-gni`` -> ``lnet_class_clients_gni``)."""
    return CLASS_PREFIX + _NOT_GROUP_CHAR.sub("_", class_name)


def var_net(net: str) -> str:
    """Net name as a variable key: number 0 written out (``gni`` -> ``gni0``)."""
    parsed = nodes.parse_net(net)
    return f"{parsed.lnd}{parsed.number}"


def _grouped(items: Sequence[tuple[str, dict[str, Any]]], what: str) -> dict[str, list[Any]]:
    """``[(net, entry), ...]`` -> ``{net0: [entry, ...]}`` in first-seen order.

    The role prints a dict back in key order, so a net whose entries are not adjacent could not
    be reproduced in the order ``lnetctl/`` has it; the solver always sorts by net.
    """
    out: dict[str, list[Any]] = {}
    last = None
    for net, entry in items:
        key = var_net(net)
        if key in out and key != last:
            raise ValueError(f"ansible: {what} for {net} are not adjacent; cannot keep order")
        out.setdefault(key, []).append(entry)
        last = key
    return out


def _routes(routes: Sequence[Route]) -> dict[str, list[dict[str, Any]]]:
    return _grouped(
        [(r.net, {"gateway": r.gateway, "hop": r.hop, "priority": r.priority}) for r in routes],
        "routes",
    )


def _networks(nis: Sequence[tuple[str, str, str]]) -> dict[str, list[dict[str, Any]]]:
    """``(net, interface, address)`` triples; ``address`` '' when it differs per host."""
    items = []
    for net, iface, addr in nis:
        entry: dict[str, Any] = {"ip": addr} if addr else {}
        entry["interfaces"] = [iface]
        items.append((net, entry))
    return _grouped(items, "networks")


def _module_networks(pairs: list[tuple[str, str]]) -> list[str]:
    """One ``net(iface)`` item per NI when that joins back to the modprobe string, else one."""
    whole = routestr.format_networks(pairs)
    parts = [routestr.format_networks([p]) for p in pairs]
    return parts if NETWORKS_SEP.join(parts) == whole else [whole]


def _module_routes(routes: Sequence[Route]) -> list[str]:
    """One item per route statement when that joins back to the modprobe string, else one."""
    whole = routestr.format_routes(
        routestr.KRoute(r.net, r.gateway, r.hop, r.priority) for r in routes
    )
    if not whole:
        return []
    parts = [p.strip() for p in whole.split(";")]
    return parts if ROUTES_SEP.join(parts) == whole else [whole]


def _addr(nid: str) -> str:
    return nid.rpartition("@")[0]


def _vars(
    ctx: Context,
    what: str,
    role: str,
    hosts: str,
    nis: Sequence[tuple[str, str, str]],
    routes: Sequence[Route],
    routing: bool,
    with_module: bool,
) -> str:
    doc: dict[str, Any] = {
        "lnetgen_role": role,
        "lnetgen_hosts": hosts,
        "lustre_lnet_routing_enabled": routing,
        "lustre_lnet_lnetctl_networks": _networks(nis),
    }
    if routes:
        doc["lustre_lnet_lnetctl_routes"] = _routes(routes)
    if with_module:
        doc["lustre_lnet_module_networks"] = _module_networks([(n, i) for n, i, _ in nis])
        kroutes = _module_routes(routes)
        if kroutes:
            doc["lustre_lnet_module_routes"] = kroutes
        doc["lustre_lnet_module_options"] = {"forwarding": "enabled" if routing else "disabled"}
    return _yaml(
        [
            ctx.header,
            f"LNet variables for {what} ({role}: {hosts}); names as in "
            "stackhpc/ansible-role-lustre",
        ],
        doc,
    )


def _modprobe_skipped(ctx: Context) -> bool:
    """True when the modprobe emitter would write nothing for this site (as part of the
    default set, i.e. not named in --formats)."""
    probe = Context(ctx.plan, ctx.site, explicit=False)
    try:
        return not modprobe.emit(probe)
    except InputError:
        return True


def static_files() -> list[tuple[str, str]]:
    """``(relative path, text)`` of the shipped role, playbook and config, sorted by path."""
    base = data_dir("templates") / _ROOT
    out = []
    for path in sorted(base.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            out.append((path.relative_to(base).as_posix(), path.read_text(encoding="utf-8")))
    return out


def _check_names(ctx: Context, groups: dict[str, str]) -> None:
    """Class groups must not collide with each other or the fixed groups, and no host may be
    in two roles: each host takes its variables from exactly one file."""
    problems = []
    taken = {CLIENTS: "", ROUTERS: "", SERVERS: "", "all": "", "ungrouped": ""}
    for cls, grp in groups.items():
        if grp in taken:
            by = f" (by class {taken[grp]!r})" if taken[grp] else ""
            problems.append(
                f"client class {cls!r} maps to Ansible group {grp!r}, which is already taken{by}"
            )
        taken[grp] = cls
    plan = ctx.plan
    counts = Counter(n for cc in plan.client_classes for n in nodes.expand(cc.members))
    counts.update(r.name for r in plan.routers)
    counts.update(s.name for s in plan.servers)
    dup = sorted(n for n, c in counts.items() if c > 1)
    if dup:
        problems.append(f"hosts {nodes.fold(dup)} appear in more than one role or class")
    if problems:
        raise InputError(
            [Diagnostic(ctx.site.file, 0, 0, "error", "E-ANSIBLE-NAMES", "$", p) for p in problems]
        )


def emit(ctx: Context) -> list[OutFile]:
    plan = ctx.plan
    with_module = not _modprobe_skipped(ctx)
    if not with_module:
        ctx.warnings.append(
            Diagnostic(
                ctx.site.file,
                0,
                0,
                "warning",
                "W-ANSIBLE-NO-MODPROBE",
                "$",
                "ansible: modprobe options would exceed the module parameter limit, so no "
                "lustre_lnet_module_* variables were written and the lnet role writes no "
                "/etc/modprobe.d/lnet.conf; /etc/lnet.conf carries the routes",
            )
        )
    groups = {cc.name: group_name(cc.name) for cc in plan.client_classes}
    _check_names(ctx, groups)

    out: list[OutFile] = []
    for cc in plan.client_classes:
        text = _vars(
            ctx,
            f"client class {cc.name}",
            "client",
            cc.members,
            [(cc.net, cc.interface, "")],
            cc.routes,
            False,
            with_module,
        )
        out.append(
            OutFile(
                f"{_ROOT}/group_vars/{groups[cc.name]}/lnet.yml", text, FORMAT, cc.members, "client"
            )
        )
    for r in plan.routers:
        text = _vars(
            ctx,
            f"router {r.name}",
            "router",
            r.name,
            [(i.net, i.interface, _addr(i.nid)) for i in r.interfaces],
            (),
            True,
            with_module,
        )
        out.append(OutFile(f"{_ROOT}/host_vars/{r.name}/lnet.yml", text, FORMAT, r.name, "router"))
    server_routes = plan.routes_for_server()
    for s in plan.servers:
        text = _vars(
            ctx,
            f"server {s.name}",
            "server",
            s.name,
            [(net, s.interface, _addr(nid)) for net, nid in zip(s.networks, s.nids, strict=True)],
            server_routes.get(s.name, ()),
            False,
            with_module,
        )
        out.append(OutFile(f"{_ROOT}/host_vars/{s.name}/lnet.yml", text, FORMAT, s.name, "server"))

    out.append(
        OutFile(
            f"{_ROOT}/group_vars/all/lnetgen.yml",
            _yaml(
                [ctx.header, "read by the lnet role (roles/lnet)"], {"lnetgen_header": ctx.header}
            ),
            FORMAT,
            "",
            "site",
        )
    )
    out.append(
        OutFile(f"{_ROOT}/inventory.yml", _inventory(ctx, groups), FORMAT, _all_hosts(ctx), "site")
    )
    for rel, text in static_files():
        out.append(OutFile(f"{_ROOT}/{rel}", text, FORMAT, "", "site"))
    return out


def _hosts(folded: str) -> dict[str, None]:
    return dict.fromkeys(nodes.to_ansible(folded)) if folded else {}


def _all_hosts(ctx: Context) -> str:
    plan = ctx.plan
    names = [n for cc in plan.client_classes for n in nodes.expand(cc.members)]
    names += [r.name for r in plan.routers] + [s.name for s in plan.servers]
    return nodes.fold(names)


def _inventory(ctx: Context, groups: dict[str, str]) -> str:
    plan = ctx.plan
    classes = {groups[cc.name]: {"hosts": _hosts(cc.members)} for cc in plan.client_classes}
    doc = {
        "all": {
            "children": {
                CLIENTS: {"children": classes},
                ROUTERS: {"hosts": _hosts(nodes.fold(r.name for r in plan.routers))},
                SERVERS: {"hosts": _hosts(nodes.fold(s.name for s in plan.servers))},
            }
        }
    }
    return _yaml(
        [
            ctx.header,
            f"Ansible inventory of site {plan.site}: run "
            "`ansible-playbook -i inventory.yml site.yml`",
        ],
        doc,
    )


__all__ = ["FORMAT", "emit", "group_name", "static_files", "var_net"]
