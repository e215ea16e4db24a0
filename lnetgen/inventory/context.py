"""What every section check shares: the document, the diagnostics found so far, and the values
that must be unique across sections (host names, NIDs, storage IPs, GUIDs, switch ports).

A ``Registry`` collects claims while the sections are read and reports duplicates once at the
end, so the first claim in file order is the original whichever section was read first.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from lnetgen.diagnostics import Diagnostic
from lnetgen.yamlsrc import Path, Source

#: Output files of client classes are named ``clients-<net>[-<hash>]``; no host may be.
RESERVED_PREFIX = "clients-"
#: Ansible's implicit groups: the emitted inventory puts every host in ``all``, and a host of
#: the same name would take ``group_vars/all``'s place in ``host_vars/`` and be warned about.
ANSIBLE_GROUPS = frozenset({"all", "ungrouped"})


class Registry:
    """Values that must be unique (names, NIDs, IPs, GUIDs, ports): claims first, then one report.

    The first claim in file order is the original; later ones are duplicates.  Many duplicates at
    one place (a node set) are folded into one diagnostic with a count.
    """

    #: for values: "201@gni (NID of rtr02) is also the NID of rtr01 (line 58)"
    VALUE = "{key} ({what} of {owner}) is also the {what} of {first} (line {line})"
    #: for names, where the owner is a kind: "server name 'x' is already used by the router at..."
    NAME = "{owner} name {key!r} is already used by the {first} at line {line}"

    def __init__(
        self, code: str, what: str, template: str = VALUE, fold: Callable[[Any], Any] = lambda k: k
    ) -> None:
        self.code = code
        self.what = what
        self.template = template
        self.fold = fold  # what makes two keys the same (host names: case-insensitive)
        self.claims: list[tuple[Any, Path, str, int]] = []  # key, path, owner, order

    @classmethod
    def of_names(cls, fold: Callable[[Any], Any] = lambda k: k) -> Registry:
        """Names of one kind of thing; each claim's owner says which kind."""
        return cls("E-DUP-NAME", "", cls.NAME, fold)

    def claim(self, key: Any, path: Path, owner: str) -> None:
        self.claims.append((key, path, owner, len(self.claims)))

    def report(self, ctx: Context, show: Callable[[Any], str] = str) -> dict[Any, tuple[str, Path]]:
        """Report duplicates; return each value's first owner and place."""
        first: dict[Any, tuple[str, Path]] = {}
        pending: dict[Path, list[str]] = {}
        order = sorted(self.claims, key=lambda c: (ctx.src.where(c[1]), c[3]))
        folded: dict[Any, Any] = {}  # folded key -> the first key as written
        for key, path, owner, _ in order:
            same = folded.setdefault(self.fold(key), key)
            if same in first:
                o, p = first[same]
                pending.setdefault(path, []).append(
                    self.template.format(
                        key=show(key), what=self.what, owner=owner, first=o, line=ctx.line(p)
                    )
                )
            else:
                first[key] = (owner, path)
        for path, msgs in pending.items():
            more = f" ({len(msgs) - 1} more like it here)" if len(msgs) > 1 else ""
            ctx.err(path, self.code, msgs[0] + more)
        return first


class Context:
    """One inventory under check: its data, what was left out, and what was found so far."""

    def __init__(self, src: Source, dropped: set[tuple[str, int]]) -> None:
        self.src = src
        self.data: dict[str, Any] = src.data
        #: list entries whose schema errors leave them out of the meaning checks
        self.dropped = dropped
        self.diags: list[Diagnostic] = []
        # output headers name the inventory by this: the document as loaded, and every CSV file
        # it names (added as they are read)
        self.digest = hashlib.sha256(
            json.dumps(src.data, sort_keys=True, separators=(",", ":")).encode()
        )
        # hosts: routers, servers, clients.  Host names are case-insensitive (DNS, ssh, and the
        # output files on a case-insensitive file system): rtr01 and RTR01 are one host
        self.names = Registry.of_names(str.lower)
        self.nids = Registry("E-DUP-NID", "NID")
        self.ips = Registry("E-DUP-IP", "storage IP")
        self.guids = Registry("E-DUP-GUID", "GUID")
        self.ports = Registry("E-PORT-TAKEN", "port")
        #: GUIDs of hosts' ports ("port") and of leaf and spine chips ("chip"), as claimed
        self.host_guids: dict[str, list[tuple[int, str, Path]]] = {"port": [], "chip": []}
        # set when a skipped entry or a failed attachment makes a whole-site count unreliable
        self.incomplete = bool(dropped)

    def items(self, key: str) -> list[tuple[int, dict[str, Any]]]:
        """The entries of list ``key`` that the meaning checks see, with their indices."""
        return [
            (i, v) for i, v in enumerate(self.data.get(key, [])) if (key, i) not in self.dropped
        ]

    def whole(self, key: str) -> bool:
        """No entry of list ``key`` was left out for a schema error."""
        return not any(k == key for k, _ in self.dropped)

    def err(self, path: Path, code: str, msg: str, hint: str = "") -> None:
        self.diags.append(self.src.diag(path, code, msg, hint=hint))

    def warn(self, path: Path, code: str, msg: str, hint: str = "") -> None:
        self.diags.append(self.src.diag(path, code, msg, severity="warning", hint=hint))

    def line(self, path: Path) -> int:
        return self.src.where(path)[0]

    def host_name(self, name: str, path: Path, kind: str) -> None:
        """Claim the name of a router or server, which names its own output files
        (``lnetctl/<name>.yaml``, ``modprobe/<name>.conf``) beside the client classes' files
        (``clients-<net>[-<hash>]``): a host whose name starts with ``clients-`` could overwrite
        a class's file, so that prefix is reserved; ``all`` and ``ungrouped`` are Ansible's
        implicit groups."""
        self.names.claim(name, path, kind)
        if name in ANSIBLE_GROUPS:
            self.err(
                path,
                "E-NAME-RESERVED",
                f"{kind} name {name!r} is the name of an Ansible group every host is in "
                f"(ansible/inventory.yml, group_vars/{name}); rename the {kind}",
            )
        if name.lower().startswith(RESERVED_PREFIX):
            self.err(
                path,
                "E-NAME-RESERVED",
                f"{kind} name {name!r} starts with {RESERVED_PREFIX!r}, which names the client "
                f"classes' output files (lnetctl/{RESERVED_PREFIX}<net>.yaml); rename the {kind}",
            )

    def guid(self, text: str, path: Path, owner: str, kind: str = "port") -> None:
        """Claim the GUID of a host's port (``kind`` "port"), a leaf module's or spine's chip
        ("chip") or a switch ("switch"); the schema checked its form.  No host's node GUID (its
        port GUID minus one) may be a chip's (``lnetgen.inventory.guids.check_node_guids``)."""
        value = int(text, 16)
        if value == 0:
            self.err(path, "E-GUID", f"{text} is the null GUID; no port or switch has it")
            return
        self.guids.claim(value, path, owner)
        if kind in ("port", "chip"):
            self.host_guids[kind].append((value, owner, path))
