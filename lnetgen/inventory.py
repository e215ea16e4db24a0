"""Site inventory: YAML with source marks -> JSON Schema -> meaning checks -> ``model.Site``.

``check(path)`` returns every diagnostic (schema and meaning, errors and warnings) plus the
``Site`` when there are no errors.  Each diagnostic points at a file, line, column and JSON path.

Meaning checks run even when the schema rejects some routers, servers or client groups: those
entries are left out (their schema errors say why) and the checks that would report their absence
as a problem of its own (a leaf without a router, clients that fit nowhere) are skipped, so one
mistake gives one diagnostic.  The codes are listed in ``CODES`` and in docs/inventory.md.
"""

from __future__ import annotations

import bisect
import csv
import dataclasses
import difflib
import hashlib
import ipaddress
import json
import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

import jsonschema
import numpy as np
import numpy.typing as npt

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic, InputError, errors, json_path
from lnetgen.model import (
    Attachment,
    ClientNet,
    Clients,
    Fabric,
    FileSystem,
    GroupParams,
    Leaf,
    Router,
    Server,
    Site,
    StrategyParams,
    Switch,
    Torus,
)
from lnetgen.resources import schema
from lnetgen.yamlsrc import Path, Source, load_file, read_text

SITE_SCHEMA = "site.schema.json"

#: Most clients one inventory may describe (the largest machines have ~10^5 nodes); a node set
#: such as ``n[1-999999999]`` is refused before it is expanded.
MAX_CLIENTS = 1_000_000
#: A numeric NID address (gni, kfi, ptlf, bxi3f) is a 32-bit number.
MAX_NUMERIC_ADDR = 0xFFFFFFFF
MAX_GUID = 0xFFFF_FFFF_FFFF_FFFF
#: At most this many diagnostics from one coordinates CSV file; the rest are counted.
MAX_CSV_DIAGS = 20

#: Every diagnostic code ``check`` can return, with one line of meaning.
CODES: dict[str, str] = {
    "E-FILE": "the inventory (or a file it names) cannot be read: missing, a directory, denied",
    "E-FILE-SIZE": "the file is larger than the 64 MiB limit",
    "E-FILE-BINARY": "the file contains a NUL byte; it is not text",
    "E-FILE-ENCODING": "the file is not valid UTF-8",
    "E-EMPTY": "the file holds no YAML document, or the document is not a mapping",
    "E-YAML-SYNTAX": "YAML syntax error (bad indentation, a tab, an unclosed quote or bracket...)",
    "E-YAML-DUPKEY": "a key appears twice in one mapping (YAML would keep only the last)",
    "E-YAML-KEY": "a mapping key is not a plain scalar",
    "E-YAML-MERGE": "YAML merge keys (<<) are not supported",
    "E-YAML-TAG": "an explicit YAML tag (!foo, !!python/...) is not supported",
    "E-YAML-SIZE": "aliases expand the document beyond the size limit (alias bomb)",
    "E-YAML-DEPTH": "the document is nested too deeply",
    "E-YAML-NUMBER": "an unquoted number YAML 1.1 reads differently (010 is octal 8, 1:30 is 90)",
    "E-SCHEMA": "a value breaks the inventory schema (range, length, list size)",
    "E-SCHEMA-KEY": "an unknown key (often a typo; a hint names the closest known key)",
    "E-SCHEMA-REQUIRED": "a required key is missing",
    "E-SCHEMA-TYPE": "a value has the wrong type; the hint says how YAML read it and how to quote",
    "E-SCHEMA-VALUE": "a value is not one of the allowed words",
    "E-NAME": "a name is not safe as a host name or file name",
    "E-IFACE": "an interface name is not a Linux interface name",
    "E-GUID": "a GUID is not a 64-bit 0x-prefixed value, is zero, or a GUID range overflows",
    "E-NID": "a NID does not parse, or its address does not fit its LND",
    "E-NET": "an LNet network name does not parse",
    "E-NET-LND": "an LND current Lustre does not parse (elan, ptl, openib...) or cannot use here",
    "E-NET-RANGE": "an LNet net number outside 0-65535",
    "E-NET-COLLIDE": "a storage net number the solver will use is also a client net or another "
    "file system's first net",
    "E-DUP-NAME": "a host, switch, leaf, fabric, client group or file system name is used twice",
    "E-DUP-NID": "two hosts have the same NID",
    "E-DUP-IP": "two hosts have the same storage IP address",
    "E-DUP-GUID": "two ports or switches have the same GUID (guid_base ranges included)",
    "E-DUP-NET": "a client net is listed twice (o2ib and o2ib0 are the same net)",
    "E-DUP-OST": "an OST index is served by two servers of one file system",
    "E-SWITCH": "a switch is described inconsistently (tor with leaves, director without)",
    "E-ATTACH-SWITCH": "an attachment names a switch that is not defined",
    "E-ATTACH-FABRIC": "a host is attached to a fabric of the wrong role",
    "E-ATTACH-LEAF": "an attachment names a leaf module the switch does not have",
    "E-ATTACH-PORT": "an attachment names a port beyond the leaf's external ports",
    "E-PORT-TAKEN": "two hosts are attached to the same switch port",
    "E-ATTACH-NODE": "a fat-tree attachment names a non-client, or a client is not attached",
    "E-TORUS-COORD": "a torus position is missing or outside the torus dimensions",
    "E-TORUS-FULL": "a torus position holds more nodes than nodes_per_chip, or clients do not fit",
    "E-TORUS-CSV": "the coordinates CSV is unreadable, malformed, or misses clients",
    "E-PATH": "a file path leaves the inventory's directory",
    "E-LEAF-NO-ROUTER": "a leaf module or TOR holds servers but no LNet router",
    "E-ROUTER-IFACE": "a router lacks an interface on the client side or the storage side",
    "E-CLIENT-NET": "a client group's net is not in client_nets, or a client net has no router",
    "E-NID-RULE": "client NIDs cannot be derived (rule does not fit the LND, list too short...)",
    "E-NODESET": "a node set does not parse or is too large",
    "E-FS-UNKNOWN": "a server names a file system not listed in filesystems",
    "E-OSTS": "OST indices on an MDS, or an OST range that does not parse",
    "E-SYNTAX": "a value the schema let through does not parse (reported where it was found)",
    "W-ROUTER-SPREAD": "routers are spread unevenly over the leaf modules that hold servers",
    "W-ROUTERS-PER-LEAF": "more than one router on one leaf module of a compute fabric",
    "W-NET-OVERLAP": "a client net or another file system's nets may fall in a storage net range",
    "W-NET-UNUSED": "a client net has neither clients nor routers",
    "W-FS-EMPTY": "a file system has no servers",
    "W-COORDS-UNUSED": "a router has torus coords but the client side is not a torus",
}

# Which schema pattern stands for which kind of value, to turn "does not match '^…$'" into a
# message an administrator understands.
_PATTERN_KINDS = {
    "^[A-Za-z0-9][A-Za-z0-9-]{0,62}$": (
        "E-NAME",
        "is not safe as a host name (letters, digits and '-', at most 63, no quotes, "
        "';', spaces, '/' or newlines)",
    ),
    "^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$": (
        "E-NAME",
        "is not safe as a name or file name (letters, digits, '_', '.', '-', at most 63; no "
        "quotes, ';', spaces, '/' or newlines)",
    ),
    "^[A-Za-z0-9][A-Za-z0-9_-]{0,7}$": (
        "E-NAME",
        "is not a Lustre file system name (1-8 letters, digits, '_' or '-'; mkfs.lustre --fsname)",
    ),
    "^[A-Za-z][A-Za-z0-9_.:-]{0,14}$": (
        "E-IFACE",
        "is not a Linux interface name (a letter, then letters, digits, '_', '.', ':', '-'; "
        "at most 15 characters)",
    ),
    "^0x[0-9a-fA-F]{16}$": (
        "E-GUID",
        "is not a 64-bit GUID written as 0x followed by 16 hex digits "
        "(OpenSM reads an unprefixed GUID as octal)",
    ),
    "^[0-9.]+@[a-z][a-z0-9]*$": ("E-NID", "is not a NID (address@net, e.g. 27@gni)"),
    "^[a-z][a-z0-9]*$": ("E-NET", "is not an LNet network name (e.g. o2ib1, gni, tcp)"),
    "^[1-9][0-9]{0,2}:[1-9][0-9]{0,2}$": (
        "E-SCHEMA",
        'is not a routers:servers ratio such as "4:3"',
    ),
    "^[A-Za-z0-9_][A-Za-z0-9_./-]*$": (
        "E-PATH",
        "is not a relative file path (letters, digits, '_', '.', '-', '/'; no leading '/' or '.')",
    ),
    "^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$": (
        "E-OSTS",
        'is not a list of OST indices such as "0-3,8"',
    ),
    "^[A-Za-z][A-Za-z0-9_-]{0,20}$": (
        "E-NAME",
        "is not a leaf name prefix (a letter, then letters, digits, '_' or '-'; at most 21)",
    ),
}

_IPV4_PATTERN_START = "^(25[0-5]"

_TYPE_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping (key: value)",
    "null": "nothing",
}

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


# ----------------------------------------------------------------------------- schema


def _strict_int(_checker: object, instance: object) -> bool:
    # jsonschema counts 1.0 as an integer; the checks below do arithmetic and ranges with it
    return isinstance(instance, int) and not isinstance(instance, bool)


@cache
def _anchored(pattern: str) -> re.Pattern[str]:
    # JSON Schema patterns are ECMA-262, where '$' is the end of the text; Python's '$' also
    # matches before a final newline, which would let "rtr01\n" through to a config file
    return re.compile(pattern[:-1] + r"\Z" if pattern.endswith("$") else pattern)


def _pattern(_validator: Any, pattern: str, instance: object, _schema: object) -> Iterator[Any]:
    if isinstance(instance, str) and not _anchored(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _validator() -> Any:
    base = jsonschema.Draft202012Validator
    cls = jsonschema.validators.extend(
        base,
        validators={"pattern": _pattern},
        type_checker=base.TYPE_CHECKER.redefine("integer", _strict_int),
    )
    return cls(schema(SITE_SCHEMA))


#: Longest user value quoted back in a message; longer ones are cut (a 10 kB name helps nobody).
MAX_SHOWN = 60
#: Unknown keys reported per mapping; the rest are counted.
MAX_UNKNOWN_KEYS = 20


def _clip(text: str, limit: int = MAX_SHOWN) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def _show(value: object) -> str:
    """``repr`` of a user value, shortened when long."""
    if isinstance(value, str) and len(value) > MAX_SHOWN:
        return f"{value[:MAX_SHOWN]!r}... ({len(value)} characters)"
    return _clip(repr(value))


def _raw_text(src: Source, path: Path) -> tuple[str, str | None] | None:
    return src.raw.get(path)


def _describe(value: object) -> str:
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if value is None:
        return "no value (null)"
    if isinstance(value, int | float):
        return f"the number {_clip(repr(value))}"
    if isinstance(value, str):
        return f"the text {_show(value)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def _type_diag(src: Source, path: Path, instance: object, expected: Any) -> tuple[str, str]:
    """Message and hint for a type error, naming the YAML 1.1 trap when there is one."""
    want = [str(expected)] if isinstance(expected, str) else [str(w) for w in expected]
    words = " or ".join(_TYPE_WORDS.get(w, w) for w in want)
    raw = _raw_text(src, path)
    plain = raw is not None and raw[1] is None
    text = raw[0] if raw is not None else ""
    hint = ""
    if plain and not isinstance(instance, str):
        if instance is None:
            got = "an empty value" if text in ("", "~") else f"{text}, which YAML reads as null"
            hint = "write the value, or quote it if it is text"
        else:
            how = _describe(instance)
            if isinstance(instance, int) and not isinstance(instance, bool):
                digits = text.lstrip("+-")
                if re.fullmatch(r"0[0-7_]+", digits):
                    how = f"the octal number {instance}"
                elif ":" in digits:
                    how = f"the base-60 number {instance}"
            got = f"{_clip(text)}, which YAML 1.1 reads as {how}"
            if "string" in want:
                hint = f'quote it: "{_clip(text)}"'
    elif isinstance(instance, str) and "integer" in want:
        got = _describe(instance)
        if re.fullmatch(r"[+-]?0[0-9]+", instance):
            hint = f"write {int(instance)} without leading zeros (and without quotes)"
        elif re.fullmatch(r"[+-]?[0-9]+", instance):
            hint = f"drop the quotes: {instance}"
    else:
        got = _describe(instance)
    return f"expected {words}, got {got}", hint


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    options = sorted(choices)
    close = difflib.get_close_matches(word[: MAX_SHOWN * 2], options, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return "allowed: " + ", ".join(options)


def _schema_diags(src: Source) -> list[tuple[Path, Diagnostic]]:
    out: list[tuple[Path, Diagnostic]] = []
    for err in _validator().iter_errors(src.data):
        out.extend(_translate(src, err))
    return out


def _translate(src: Source, err: Any) -> Iterator[tuple[Path, Diagnostic]]:
    if err.validator in ("oneOf", "anyOf") and err.context:
        # report the most relevant branch instead of one vague "not valid under any"
        err = jsonschema.exceptions.best_match(err.context)
    path: Path = tuple(err.absolute_path)
    inst = err.instance
    kind = err.validator
    hint = str(err.schema.get("description", "")) if isinstance(err.schema, dict) else ""
    if kind == "additionalProperties" and isinstance(inst, dict):
        known = set(err.schema.get("properties", {}))
        extra = sorted(set(inst) - known, key=lambda k: src.where((*path, k)))
        for key in extra[:MAX_UNKNOWN_KEYS]:
            yield (
                (*path, key),
                src.diag(
                    (*path, key),
                    "E-SCHEMA-KEY",
                    f"unknown key {_show(key)}",
                    hint=_did_you_mean(key, known),
                ),
            )
        if len(extra) > MAX_UNKNOWN_KEYS:
            yield (
                path,
                src.diag(
                    path,
                    "E-SCHEMA-KEY",
                    f"{len(extra) - MAX_UNKNOWN_KEYS} more unknown key(s) here not shown",
                ),
            )
        return
    code, message = "E-SCHEMA", err.message
    if kind == "required":
        missing = [k for k in err.validator_value if isinstance(inst, dict) and k not in inst]
        m = re.match(r"^'(.*)' is a required property$", err.message)
        key = m.group(1) if m else (missing[0] if missing else "?")
        code, message, hint = "E-SCHEMA-REQUIRED", f"missing required key {key!r}", ""
    elif kind == "type":
        code = "E-SCHEMA-TYPE"
        message, trap = _type_diag(src, path, inst, err.validator_value)
        hint = trap or hint
    elif kind == "pattern":
        pattern = str(err.validator_value)
        found = _PATTERN_KINDS.get(pattern)
        if found:
            code, what = found
            message = f"{_show(inst)} {what}"
            hint = ""
        elif pattern.startswith(_IPV4_PATTERN_START):
            code, message, hint = "E-SCHEMA", f"{_show(inst)} is not an IPv4 address", ""
        else:
            message = f"{_show(inst)} does not have the expected form"
    elif kind in ("enum", "const"):
        allowed = err.validator_value if kind == "enum" else [err.validator_value]
        code = "E-SCHEMA-VALUE"
        message = f"{_show(inst)} is not one of: {', '.join(str(a) for a in allowed)}"
        close = difflib.get_close_matches(str(inst), [str(a) for a in allowed], n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else ""
    elif kind in ("minItems", "maxItems") and isinstance(inst, list):
        lo = err.schema.get("minItems", 0)
        hi = err.schema.get("maxItems")
        if lo == hi:
            message = f"expected exactly {lo} items, got {len(inst)}"
        elif kind == "minItems":
            message = "must not be empty" if lo == 1 else f"expected at least {lo} items"
        else:
            message = f"expected at most {hi} items, got {len(inst)}"
    elif kind == "minLength" and inst == "":
        message = "must not be empty"
    elif kind == "maxLength" and isinstance(inst, str):
        message = f"{_show(inst)} is longer than {err.validator_value} characters"
    elif kind in ("minimum", "maximum"):
        lo, hi = err.schema.get("minimum"), err.schema.get("maximum")
        message = (
            f"{inst!r} is outside {lo}-{hi}" if lo is not None and hi is not None else (err.message)
        )
    yield path, src.diag(path, code, message, hint=hint)


def _droppable(path: Path) -> tuple[str, int] | None:
    """The list entry a schema error can be confined to (routers[i], servers[i], clients[i])."""
    if len(path) >= 2 and path[0] in ("routers", "servers", "clients") and isinstance(path[1], int):
        return str(path[0]), path[1]
    return None


_OCTAL = re.compile(r"[+-]?0[0-7_]+")
_SEXAGESIMAL = re.compile(r"[+-]?[0-9][0-9_]*(:[0-5]?[0-9])+")


def _yaml_number_traps(src: Source, skip: set[Path]) -> list[tuple[Path, Diagnostic]]:
    """Unquoted numbers the schema accepted but YAML 1.1 read as octal or base 60."""
    out: list[tuple[Path, Diagnostic]] = []
    for path, (text, style) in sorted(src.raw.items(), key=lambda kv: src.where(kv[0])):
        if style is not None or path in skip:
            continue
        if _OCTAL.fullmatch(text) or _SEXAGESIMAL.fullmatch(text):
            value = _lookup(src.data, path)
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            digits = text.replace("_", "").lstrip("+")
            if ":" in digits:
                how, hint = "base-60", "write the number you mean as plain digits"
            elif int(digits, 10) == value:
                continue  # 00, 07: the same value either way
            else:
                decimal = digits.lstrip("-").lstrip("0") or "0"
                how, hint = "octal", f"write {decimal} without the leading zero"
            out.append(
                (
                    path,
                    src.diag(
                        path,
                        "E-YAML-NUMBER",
                        f"YAML 1.1 reads the unquoted {text} as the {how} number {value}",
                        hint=hint,
                    ),
                )
            )
    return out


def _lookup(data: Any, path: Path) -> Any:
    for p in path:
        try:
            data = data[p]
        except (KeyError, IndexError, TypeError):
            return None
    return data


# ----------------------------------------------------------------------------- meaning checks


_CSV_INT = re.compile(r"[ \t]*-?[0-9]+[ \t]*")


def _label(module: tuple[str, str]) -> str:
    return f"{module[0]}/{module[1]}" if module[1] else module[0]


class _Registry:
    """Values that must be unique (names, NIDs, IPs, GUIDs, ports): claims first, then one report.

    The first claim in file order is the original; later ones are duplicates.  Many duplicates at
    one place (a node set) are folded into one diagnostic with a count.
    """

    #: for values: "201@gni (NID of rtr02) is also the NID of rtr01 (line 58)"
    VALUE = "{key} ({what} of {owner}) is also the {what} of {first} (line {line})"
    #: for names, where the owner is a kind: "server name 'x' is already used by the router at..."
    NAME = "{owner} name {key!r} is already used by the {first} at line {line}"

    def __init__(self, code: str, what: str, template: str = VALUE) -> None:
        self.code = code
        self.what = what
        self.template = template
        self.claims: list[tuple[Any, Path, str, int]] = []  # key, path, owner, order

    def claim(self, key: Any, path: Path, owner: str) -> None:
        self.claims.append((key, path, owner, len(self.claims)))

    def report(self, chk: _Checker, show: Any = str) -> dict[Any, tuple[str, Path]]:
        """Report duplicates; return each value's first owner and place."""
        first: dict[Any, tuple[str, Path]] = {}
        pending: dict[Path, list[str]] = {}
        order = sorted(self.claims, key=lambda c: (chk.src.where(c[1]), c[3]))
        for key, path, owner, _ in order:
            if key in first:
                o, p = first[key]
                pending.setdefault(path, []).append(
                    self.template.format(
                        key=show(key), what=self.what, owner=owner, first=o, line=chk.line(p)
                    )
                )
            else:
                first[key] = (owner, path)
        for path, msgs in pending.items():
            more = f" ({len(msgs) - 1} more like it here)" if len(msgs) > 1 else ""
            chk.err(path, self.code, msgs[0] + more)
        return first


class _Checker:
    """Meaning checks on schema-valid data; builds the model as it goes."""

    def __init__(self, src: Source, dropped: set[tuple[str, int]]) -> None:
        self.src = src
        self.d: dict[str, Any] = src.data
        self.dropped = dropped
        self.diags: list[Diagnostic] = []
        self.digest = hashlib.sha256()
        self.names = _Registry("E-DUP-NAME", "host", _Registry.NAME)
        self.nids = _Registry("E-DUP-NID", "NID")
        self.ips = _Registry("E-DUP-IP", "storage IP")
        self.guids = _Registry("E-DUP-GUID", "GUID")
        self.ports = _Registry("E-PORT-TAKEN", "port")
        # client guid_base ranges: first GUID, stop, group, path, index of its first client
        self.guid_ranges: list[tuple[int, int, str, Path, int]] = []
        self.client_names: list[str] = []
        # set when a skipped entry or a failed attachment makes a whole-site count unreliable
        self.incomplete = bool(dropped)
        self.router_modules: list[tuple[int, tuple[str, str]]] = []  # every attached router
        self.router_nets: set[nodes.Net] = set()  # client nets some router has a NID on
        self.client_count: Counter[nodes.Net] = Counter()
        self.clients_complete = False
        self.cnets_whole = True

    def items(self, key: str) -> list[tuple[int, dict[str, Any]]]:
        return [(i, v) for i, v in enumerate(self.d.get(key, [])) if (key, i) not in self.dropped]

    def err(self, path: Path, code: str, msg: str, hint: str = "") -> None:
        self.diags.append(self.src.diag(path, code, msg, hint=hint))

    def warn(self, path: Path, code: str, msg: str, hint: str = "") -> None:
        self.diags.append(self.src.diag(path, code, msg, severity="warning", hint=hint))

    def line(self, path: Path) -> int:
        return self.src.where(path)[0]

    # -------------------------------------------------------------- nets and NIDs
    def net(self, text: str, path: Path) -> nodes.Net | None:
        try:
            return nodes.parse_net(text)
        except nodes.NodeSyntaxError as exc:
            lnd = text.strip().rstrip("0123456789")
            if lnd in nodes.LNDS:
                self.err(
                    path, "E-NET-RANGE", str(exc), hint="LNet net numbers are 16 bits: 0-65535"
                )
            else:
                hint = _LND_HINTS.get(lnd, "current LNDs: " + ", ".join(sorted(nodes.LNDS)))
                self.err(path, "E-NET-LND", str(exc), hint=hint)
            return None

    def nid(self, text: str, path: Path) -> nodes.Nid | None:
        net = self.net(text.rpartition("@")[2], path)  # LND and range problems, with hints
        if net is None:
            return None
        try:
            nid = nodes.parse_nid(text)
        except nodes.NodeSyntaxError as exc:
            self.err(path, "E-NID", str(exc))
            return None
        if not net.ip_based and int(nid.addr) > MAX_NUMERIC_ADDR:
            self.err(
                path,
                "E-NID",
                f"{text!r}: {net.lnd} addresses are 32-bit numbers (at most {MAX_NUMERIC_ADDR})",
            )
            return None
        return nid

    def guid(self, text: str, path: Path, owner: str) -> None:
        value = int(text, 16)
        if value == 0:
            self.err(path, "E-GUID", f"{text} is the null GUID; no port or switch has it")
            return
        self.guids.claim(value, path, owner)

    # -------------------------------------------------------------- fabrics
    def fabrics(self) -> tuple[Fabric, ...]:
        out = []
        fabric_names = _Registry("E-DUP-NAME", "", _Registry.NAME)
        switch_names = _Registry("E-DUP-NAME", "", _Registry.NAME)
        for fi, f in enumerate(self.d["fabrics"]):
            fabric_names.claim(f["name"], ("fabrics", fi, "name"), "fabric")
            switches = []
            for si, s in enumerate(f["switches"]):
                p: Path = ("fabrics", fi, "switches", si)
                switch_names.claim(s["name"], (*p, "name"), "switch")
                if "guid" in s:
                    self.guid(s["guid"], (*p, "guid"), f"switch {s['name']}")
                for gi, g in enumerate(s.get("spine_guids", [])):
                    self.guid(g, (*p, "spine_guids", gi), f"spine {gi + 1} of {s['name']}")
                leaves = self.switch_leaves(s, p)
                switches.append(
                    Switch(
                        s["name"],
                        s["kind"],
                        f["name"],
                        tuple(leaves),
                        s.get("spines", 0),
                        s.get("guid", ""),
                        tuple(s.get("spine_guids", ())),
                    )
                )
            out.append(Fabric(f["name"], f["role"], tuple(switches)))
        fabric_names.report(self)
        switch_names.report(self)
        return tuple(out)

    def switch_leaves(self, s: dict[str, Any], p: Path) -> list[Leaf]:
        if s["kind"] == "tor":
            for key in ("leaves", "spines", "spine_guids"):
                if s.get(key):
                    self.err(
                        (*p, key),
                        "E-SWITCH",
                        f"{s['name']} is a top-of-rack switch: it has no {key}; "
                        "give 'ports' (and 'uplinks')",
                    )
            if "ports" not in s:
                self.err(
                    p,
                    "E-SWITCH",
                    f"top-of-rack switch {s['name']} needs 'ports' (its number of external ports)",
                )
                return []
            return [Leaf("", s["ports"], s.get("uplinks", 0))]
        # a director: leaf modules, spines (0 is fine: a single-module chassis or unknown)
        for key in ("ports", "uplinks"):
            if key in s:
                self.err(
                    (*p, key),
                    "E-SWITCH",
                    f"{s['name']} is a director switch: give '{key}' per leaf module "
                    "under 'leaves'",
                )
        guids = s.get("spine_guids")
        if guids is not None and len(guids) > s.get("spines", 0):
            # fewer is allowed (not every spine GUID may be known); more cannot be right
            self.err(
                (*p, "spine_guids"),
                "E-SWITCH",
                f"{s['name']} lists {len(guids)} spine GUID(s) for {s.get('spines', 0)} spine(s)",
            )
        spec = s.get("leaves")
        if spec is None:
            self.err(
                p,
                "E-SWITCH",
                f"director switch {s['name']} needs 'leaves' "
                "(e.g. {count: 24, ports: 12, uplinks: 12})",
            )
            return []
        if isinstance(spec, dict):
            width = max(2, len(str(spec["count"])))
            prefix = spec.get("prefix", "L")
            ports = int(spec["ports"])
            return [
                Leaf(f"{prefix}{i:0{width}d}", ports, int(spec.get("uplinks", ports)))
                for i in range(1, spec["count"] + 1)
            ]
        leaves = []
        names = _Registry("E-DUP-NAME", "", _Registry.NAME)
        for li, lf in enumerate(spec):
            lp: Path = (*p, "leaves", li)
            names.claim(lf["name"], (*lp, "name"), "leaf")
            if "guid" in lf:
                self.guid(lf["guid"], (*lp, "guid"), f"leaf {s['name']}/{lf['name']}")
            ports = int(lf["ports"])
            leaves.append(
                Leaf(lf["name"], ports, int(lf.get("uplinks", ports)), lf.get("guid", ""))
            )
        names.report(self)
        return leaves

    # -------------------------------------------------------------- attachments
    def attach(self, spec: dict[str, Any], path: Path, role: str, who: str) -> Attachment | None:
        """Resolve and check one attachment; the port itself is claimed by the caller."""
        sw = self.switches.get(spec["switch"])
        if sw is None:
            self.err(
                (*path, "switch"),
                "E-ATTACH-SWITCH",
                f"{who} is attached to switch {spec['switch']!r}, which is not defined",
                hint=_did_you_mean(spec["switch"], self.switches),
            )
            return None
        fabric_role = self.fabric_roles[sw.fabric]
        if fabric_role != role:
            self.err(
                (*path, "switch"),
                "E-ATTACH-FABRIC",
                f"{who} must be on a {role} fabric, but {sw.name} is on "
                f"{fabric_role} fabric {sw.fabric!r}",
            )
            return None
        leaf_name = spec.get("leaf", "")
        if sw.kind == "tor" and leaf_name:
            self.err(
                (*path, "leaf"),
                "E-ATTACH-LEAF",
                f"{sw.name} is a top-of-rack switch without leaf modules; drop 'leaf'",
            )
            return None
        leaf = sw.leaf(leaf_name)
        if leaf is None:
            if not leaf_name:
                self.err(
                    path,
                    "E-ATTACH-LEAF",
                    f"{who} is attached to director switch {sw.name} without a 'leaf'",
                )
            else:
                self.err(
                    (*path, "leaf"),
                    "E-ATTACH-LEAF",
                    f"switch {sw.name} has no leaf module {leaf_name!r} (attachment of {who})",
                    hint=_did_you_mean(leaf_name, [lf.name for lf in sw.leaves]),
                )
            return None
        port = spec["port"]
        if port > leaf.ports:
            where = f"{sw.name}/{leaf_name}" if leaf_name else sw.name
            self.err(
                (*path, "port"),
                "E-ATTACH-PORT",
                f"port {port} of {who} does not exist: {where} has {leaf.ports} external ports",
            )
            return None
        return Attachment(sw.name, leaf_name, port)

    def claim_port(self, a: Attachment, path: Path, who: str) -> None:
        self.ports.claim(a, path, who)

    # -------------------------------------------------------------- main
    def run(self) -> Site | None:
        d = self.d
        self.fabric_list = self.fabrics()
        self.switches: dict[str, Switch] = {}
        for f in self.fabric_list:
            for s in f.switches:
                self.switches.setdefault(s.name, s)
        self.fabric_roles: dict[str, str] = {}
        for f in self.fabric_list:
            self.fabric_roles.setdefault(f.name, f.role)

        fss = self.filesystems()
        params = self.strategy()
        cnets = self.client_nets()
        topo: dict[str, Any] | None = d.get("topology")
        torus: Torus | None = None
        if topo is not None and topo["kind"] == "torus":
            dims = topo["dims"]
            torus = Torus(
                (dims[0], dims[1], dims[2]),
                topo.get("nodes_per_chip", 1),
                topo.get("routing", "xyz"),
            )
        routers = self.routers(cnets, torus, topo)
        servers = self.servers({f.name for f in fss})
        clients = self.clients(cnets, torus, routers, topo)

        # uniqueness, reported once everything has claimed its values
        self.names.report(self)
        self.nids.report(self)
        self.ips.report(self)
        self.ports.report(self, show=lambda a: f"{a.label()}:{a.port}")
        guid_owner = self.guids.report(self, show=lambda g: f"0x{g:016x}")
        self.guid_range_checks(guid_owner)

        self.net_checks(cnets, params, fss, servers)
        if not self.incomplete:
            self.leaf_checks(servers)
        self.compute_leaf_checks(routers)

        if errors(self.diags) or clients is None:
            return None
        return Site(
            name=d["site"],
            description=d.get("description", ""),
            file=self.src.file,
            digest=self.digest.hexdigest(),
            client_nets=tuple(cnets),
            clients=clients,
            torus=torus,
            client_fabric=topo["fabric"] if topo and topo["kind"] == "fat-tree" else "",
            fabrics=self.fabric_list,
            routers=tuple(r for _, r in routers),
            servers=tuple(s for _, s in servers),
            filesystems=tuple(fss),
            strategy=params,
        )

    # -------------------------------------------------------------- file systems, strategy
    def filesystems(self) -> list[FileSystem]:
        fss: list[FileSystem] = []
        names = _Registry("E-DUP-NAME", "", _Registry.NAME)
        for i, fs in enumerate(self.d["filesystems"]):
            names.claim(fs["name"], ("filesystems", i, "name"), "file system")
            fss.append(FileSystem(fs["name"], fs.get("net_base")))
        names.report(self)
        return fss

    def strategy(self) -> StrategyParams:
        st = self.d.get("strategy", {})
        gp = st.get("groups", {})

        def ratio(key: str, default: tuple[int, int]) -> tuple[int, int]:
            if key not in gp:
                return default
            a, b = str(gp[key]).split(":")
            return int(a), int(b)

        lnd = st.get("storage_lnd", "o2ib")
        if not nodes.LNDS.get(lnd, True):
            self.err(
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
                gp.get("backup", "next"),
                gp.get("backup_priority", 1),
            ),
        )

    def client_nets(self) -> list[ClientNet]:
        cnets: list[ClientNet] = []
        first: dict[nodes.Net, int] = {}
        for i, cn in enumerate(self.d["client_nets"]):
            p: Path = ("client_nets", i, "name")
            net = self.net(cn["name"], p)
            if net is None:
                # the net that did not parse may be the one others name: do not pile on it
                self.cnets_whole = False
                continue
            if net in first:
                self.err(
                    p,
                    "E-DUP-NET",
                    f"client net {cn['name']!r} is {net}, already listed at line "
                    f"{self.line(('client_nets', first[net], 'name'))}",
                    hint="o2ib and o2ib0 name the same net",
                )
                continue
            first[net] = i
            cnets.append(ClientNet(net, cn.get("interface", "")))
        self.cnet_pos = {c.net: first[c.net] for c in cnets}
        return cnets

    # -------------------------------------------------------------- servers
    def servers(self, fs_names: set[str]) -> list[tuple[int, Server]]:
        out: list[tuple[int, Server]] = []
        ost_owner: dict[tuple[str, int], tuple[str, Path]] = {}
        for i, s in self.items("servers"):
            p: Path = ("servers", i)
            name = s["name"]
            self.names.claim(name, (*p, "name"), "server")
            self.ips.claim(s["ip"], (*p, "ip"), name)
            if "guid" in s:
                self.guid(s["guid"], (*p, "guid"), name)
            if s["fs"] not in fs_names:
                self.err(
                    (*p, "fs"),
                    "E-FS-UNKNOWN",
                    f"file system {s['fs']!r} of {name} is not in 'filesystems'",
                    hint=_did_you_mean(s["fs"], fs_names),
                )
            osts = self.osts(s, p)
            for o in osts:
                key = (s["fs"], o)
                if key in ost_owner:
                    owner, op = ost_owner[key]
                    self.err(
                        (*p, "osts"),
                        "E-DUP-OST",
                        f"OST index {o} of {s['fs']} is served by {name} and by {owner} "
                        f"(line {self.line(op)})",
                    )
                    break
                ost_owner[key] = (name, (*p, "osts"))
            a = self.attach(s["attach"], (*p, "attach"), "storage", name)
            if a is None:
                self.incomplete = True
                continue
            self.claim_port(a, (*p, "attach"), name)
            out.append(
                (
                    i,
                    Server(
                        name,
                        s["role"],
                        s["fs"],
                        s["ip"],
                        s["interface"],
                        s.get("guid", ""),
                        a,
                        osts,
                    ),
                )
            )
        return out

    def osts(self, s: dict[str, Any], p: Path) -> tuple[int, ...]:
        if "osts" not in s:
            return ()
        raw = s["osts"]
        if s["role"] != "oss":
            self.err(
                (*p, "osts"), "E-OSTS", f"{s['name']} is an {s['role']}; only an OSS holds OSTs"
            )
            return ()
        if not isinstance(raw, str):
            return tuple(sorted(set(raw)))
        for part in raw.split(","):
            lo, _, hi = part.partition("-")
            if hi and int(lo) > int(hi):
                self.err((*p, "osts"), "E-OSTS", f"OST range {part} runs backwards")
                return ()
            if int(hi or lo) > 65535:
                self.err((*p, "osts"), "E-OSTS", f"OST index {int(hi or lo)} is outside 0-65535")
                return ()
        try:
            return tuple(sorted(set(nodes.parse_intset(raw))))
        except nodes.NodeSyntaxError as exc:
            self.err((*p, "osts"), "E-OSTS", str(exc))
            return ()

    # -------------------------------------------------------------- routers
    def routers(
        self, cnets: list[ClientNet], torus: Torus | None, topo: dict[str, Any] | None
    ) -> list[tuple[int, Router]]:
        cnet_set = {c.net for c in cnets}
        out: list[tuple[int, Router]] = []
        fat_fabric = topo["fabric"] if topo is not None and topo["kind"] == "fat-tree" else None
        for i, r in self.items("routers"):
            p: Path = ("routers", i)
            name = r["name"]
            self.names.claim(name, (*p, "name"), "router")
            self.ips.claim(r["storage"]["ip"], (*p, "storage", "ip"), name)
            for side in ("storage", "client"):
                if "guid" in r[side]:
                    self.guid(r[side]["guid"], (*p, side, "guid"), f"the {side} port of {name}")
            ok = True
            nid_path: Path = (*p, "client", "nid")
            cnid = self.nid(r["client"]["nid"], nid_path)
            if cnid is None:
                ok = False
            else:
                self.nids.claim(str(cnid), nid_path, name)
                self.router_nets.add(cnid.net)
                if cnid.net not in cnet_set and self.cnets_whole:
                    known = ", ".join(str(c.net) for c in cnets) or "none"
                    self.err(
                        nid_path,
                        "E-ROUTER-IFACE",
                        f"router {name} has no interface on a client net: its client NID "
                        f"is on {cnid.net}, which is not in client_nets ({known})",
                    )
                    ok = False
            coords: tuple[int, int, int] | None = None
            if torus is not None:
                if "coords" not in r:
                    self.err(
                        p,
                        "E-TORUS-COORD",
                        f"router {name} needs 'coords' [x, y, z]: the client side is a torus",
                    )
                    ok = False
                else:
                    c = r["coords"]
                    coords = (c[0], c[1], c[2])
                    if any(v >= n for v, n in zip(coords, torus.dims, strict=True)):
                        self.err(
                            (*p, "coords"),
                            "E-TORUS-COORD",
                            f"{list(coords)} of {name} is outside the torus "
                            f"{list(torus.dims)} (coordinates count from 0)",
                        )
                        ok = False
            elif "coords" in r:
                self.warn(
                    (*p, "coords"),
                    "W-COORDS-UNUSED",
                    f"coords of {name} are ignored: the client side is not a torus",
                )
            a = self.attach(r["attach"], (*p, "attach"), "storage", name)
            if a is None:
                self.incomplete = True
                ok = False
            else:
                self.claim_port(a, (*p, "attach"), name)
                self.router_modules.append((i, a.module))
            ca: Attachment | None = None
            if "attach" in r["client"]:
                ca = self.attach(r["client"]["attach"], (*p, "client", "attach"), "compute", name)
                if ca is None:
                    ok = False
                else:
                    self.claim_port(ca, (*p, "client", "attach"), name)
                    if fat_fabric is not None and self.switches[ca.switch].fabric != fat_fabric:
                        self.err(
                            (*p, "client", "attach", "switch"),
                            "E-ROUTER-IFACE",
                            f"router {name} is attached to {ca.switch} on fabric "
                            f"{self.switches[ca.switch].fabric!r}, but the clients are on "
                            f"{fat_fabric!r}",
                        )
                        ok = False
            elif fat_fabric is not None:
                self.err(
                    (*p, "client"),
                    "E-ROUTER-IFACE",
                    f"router {name} has no port on the clients' fabric {fat_fabric!r}: "
                    "give client.attach {switch, leaf, port}",
                )
                ok = False
            if ok and cnid is not None and a is not None:
                out.append(
                    (
                        i,
                        Router(
                            name,
                            str(cnid),
                            cnid.net,
                            r["client"]["interface"],
                            r["storage"]["ip"],
                            r["storage"]["interface"],
                            r["storage"].get("guid", ""),
                            a,
                            coords,
                            r["client"].get("guid", ""),
                            ca,
                        ),
                    )
                )
        return out

    # -------------------------------------------------------------- clients
    def clients(
        self,
        cnets: list[ClientNet],
        torus: Torus | None,
        routers: list[tuple[int, Router]],
        topo: dict[str, Any] | None,
    ) -> Clients | None:
        all_names: list[str] = self.client_names
        all_nids: list[str] = []
        net_idx: list[int] = []
        guids: list[str] = []
        with_guids = 0
        groups: list[tuple[str, int, int]] = []
        net_pos = {c.net: i for i, c in enumerate(cnets)}
        group_names = _Registry("E-DUP-NAME", "", _Registry.NAME)
        ok = not any(k == "clients" for k, _ in self.dropped)
        total = 0
        seen: set[str] = set()
        for gi, g in self.items("clients"):
            p: Path = ("clients", gi)
            group_names.claim(g["name"], (*p, "name"), "client group")
            members = self.members(g["nodes"], (*p, "nodes"), total)
            if members is None:
                ok = False
                continue
            total += len(members)
            net = self.net(g["net"], (*p, "net"))
            if net is None:
                ok = False
                continue
            if net not in net_pos:
                if not self.cnets_whole:
                    ok = False
                    continue
                self.err(
                    (*p, "net"),
                    "E-CLIENT-NET",
                    f"net {net} of client group {g['name']} is not in client_nets",
                    hint="add it to client_nets (with its interface)",
                )
                ok = False
                continue
            addrs = self.client_addrs(g, net, members, p)
            if addrs is None:
                ok = False
                continue
            self.client_count[net] += len(members)
            start = len(all_names)
            for m, a in zip(members, addrs, strict=True):
                nid = f"{a}@{net}"
                self.names.claim(m, (*p, "nodes"), "client")
                if m not in seen:  # a host listed twice is one E-DUP-NAME, not also a NID clash
                    self.nids.claim(nid, (*p, "nodes"), m)
                seen.add(m)
                all_names.append(m)
                all_nids.append(nid)
            net_idx.extend([net_pos[net]] * len(members))
            if "guid_base" in g:
                base = int(g["guid_base"], 16)
                with_guids += 1
                stop = base + len(members)
                if base == 0 or stop - 1 > MAX_GUID:
                    self.err(
                        (*p, "guid_base"),
                        "E-GUID",
                        f"guid_base {g['guid_base']} + {len(members)} nodes "
                        + (
                            "starts at the null GUID"
                            if base == 0
                            else "runs past 0xffffffffffffffff"
                        ),
                    )
                    ok = False
                else:
                    self.guid_ranges.append(
                        (base, stop, f"client group {g['name']}", (*p, "guid_base"), start)
                    )
                    guids.extend(f"0x{base + k:016x}" for k in range(len(members)))
            groups.append((g["name"], start, len(all_names)))
        group_names.report(self)
        if with_guids and with_guids != len(groups):
            self.err(
                ("clients",),
                "E-GUID",
                "guid_base must be given for every client group or for none "
                f"({with_guids} of {len(groups)} groups have one)",
            )
            ok = False
        if not ok or len(seen) != len(all_names):  # duplicates: E-DUP-NAME says which
            return None
        self.clients_complete = True
        n = len(all_names)
        coords = np.full((n, 3), -1, dtype=np.int32)
        leaf = np.full(n, -1, dtype=np.int32)
        self.client_ports = np.zeros(n, dtype=np.int32)
        leaves: list[tuple[str, str]] = []
        if torus is not None and topo is not None:
            got = self.torus_coords(torus, topo, all_names, [r for _, r in routers])
            if got is None:
                return None
            coords = got
        elif topo is not None and topo["kind"] == "fat-tree":
            got_leaf = self.fat_tree(topo, all_names, leaves)
            if got_leaf is None:
                return None
            leaf = got_leaf
        return Clients(
            tuple(all_names),
            tuple(all_nids),
            np.asarray(net_idx, dtype=np.int32),
            tuple(c.net for c in cnets),
            tuple(c.interface for c in cnets),
            tuple(groups),
            coords,
            leaf,
            tuple(leaves),
            tuple(guids),
            self.client_ports,
        )

    def expand(self, text: str, path: Path, room: int = MAX_CLIENTS) -> list[str] | None:
        """Expand a node set of at most ``room`` nodes; report why not otherwise."""
        bound = nodes.count(text)
        if bound > room:
            self.err(
                path,
                "E-NODESET",
                f"node set {_show(text)} names about {bound} nodes; one inventory holds at most "
                f"{MAX_CLIENTS} clients",
            )
            return None
        try:
            return nodes.expand(text)
        except nodes.NodeSyntaxError as exc:
            hint = ""
            if re.search(r"\[[0-9]+:[0-9]+\]", text):
                hint = f"that is Ansible's range syntax; ClusterShell: {nodes.from_ansible(text)}"
            self.err(
                path,
                "E-NODESET",
                f"not a valid node set: {_clip(str(exc), 3 * MAX_SHOWN)}",
                hint=hint,
            )
            return None

    def members(self, text: str, path: Path, so_far: int) -> list[str] | None:
        """Expand a client node set, refusing unsafe names and runaway sizes."""
        members = self.expand(text, path, MAX_CLIENTS - so_far)
        if members is None:
            return None
        if not members:
            self.err(path, "E-NODESET", f"node set {_show(text)} is empty")
            return None
        bad = [m for m in members if not nodes.HOSTNAME_RE.match(m)]
        if bad:
            more = f" ({len(bad) - 1} more)" if len(bad) > 1 else ""
            self.err(
                path,
                "E-NAME",
                f"{_show(bad[0])} is not safe as a host name (letters, digits and '-', at most 63; "
                f"no quotes, ';', spaces, '/' or newlines){more}",
            )
            return None
        return members

    def client_addrs(
        self, g: dict[str, Any], net: nodes.Net, members: list[str], p: Path
    ) -> list[str] | None:
        rule = g.get("nid", None if net.ip_based else "number")
        rp: Path = (*p, "nid")
        if rule is None:
            self.err(
                p,
                "E-NID-RULE",
                f"clients of group {g['name']} on {net} need 'nid: {{ip: <first address>}}' "
                "or a list of addresses",
            )
            return None
        if rule == "number":
            if net.ip_based:
                self.err(
                    rp,
                    "E-NID-RULE",
                    f"{net.lnd} NIDs are IP addresses; 'number' only fits gni, kfi, ptlf and bxi3f",
                    hint="give nid: {ip: <address of the first node>}",
                )
                return None
            try:
                addrs = [nodes.host_number(m) for m in members]
            except nodes.NodeSyntaxError as exc:
                self.err(rp, "E-NID-RULE", str(exc))
                return None
            big = next(
                (m for m, a in zip(members, addrs, strict=True) if a > MAX_NUMERIC_ADDR), None
            )
            if big is not None:
                self.err(
                    rp, "E-NID-RULE", f"the number of {big} does not fit a 32-bit {net.lnd} address"
                )
                return None
            return [str(a) for a in addrs]
        if isinstance(rule, dict):
            if not net.ip_based:
                self.err(
                    rp,
                    "E-NID-RULE",
                    f"{net.lnd} NIDs are numbers, not IP addresses",
                    hint="use nid: number (the host name's trailing number) or a list",
                )
                return None
            first = int(ipaddress.IPv4Address(rule["ip"]))
            if first + len(members) - 1 > 0xFFFFFFFF:
                self.err(
                    (*rp, "ip"),
                    "E-NID-RULE",
                    f"{len(members)} addresses from {rule['ip']} run past 255.255.255.255",
                )
                return None
            return [str(ipaddress.IPv4Address(first + k)) for k in range(len(members))]
        if len(rule) != len(members):
            self.err(
                rp,
                "E-NID-RULE",
                f"{len(rule)} NID addresses listed for {len(members)} nodes ({g['nodes']})",
            )
            return None
        out = []
        for k, a in enumerate(rule):
            try:
                nid = nodes.parse_nid(f"{a}@{net}")
            except nodes.NodeSyntaxError as exc:
                self.err((*rp, k), "E-NID", str(exc))
                return None
            if not net.ip_based and int(nid.addr) > MAX_NUMERIC_ADDR:
                self.err((*rp, k), "E-NID", f"{a} does not fit a 32-bit {net.lnd} address")
                return None
            out.append(nid.addr)
        return out

    # -------------------------------------------------------------- torus
    def torus_coords(
        self, torus: Torus, topo: dict[str, Any], names: list[str], routers: list[Router]
    ) -> npt.NDArray[np.int32] | None:
        X, Y, Z = torus.dims
        npc = torus.nodes_per_chip
        chips = X * Y * Z
        spec = topo.get("coordinates", {"rule": "linear"})
        occupancy = np.zeros(chips, dtype=np.int64)
        for r in routers:
            if r.coords is not None:
                x, y, z = r.coords
                occupancy[x + X * (y + Y * z)] += 1
        path: Path = ("topology", "coordinates")
        n = len(names)
        if "csv" in spec:
            got = self.coords_csv(spec["csv"], names, torus.dims, (*path, "csv"))
            if got is None:
                return None
            coords = got
        else:
            # slots in numbering order, as flat x-fastest indices; zyx walks z fastest
            flat = np.arange(chips, dtype=np.int64)
            if spec.get("order", "xyz") == "zyx":
                flat = flat.reshape(Z, Y, X).transpose(2, 1, 0).ravel()
            if spec.get("skip_routers", True):
                cap = np.clip(npc - occupancy[flat], 0, None)
            else:
                cap = np.full(chips, npc, dtype=np.int64)
            free = np.repeat(flat, cap)
            if len(free) < n:
                self.err(
                    path if "coordinates" in topo else ("topology",),
                    "E-TORUS-FULL",
                    f"{n} clients do not fit in a {X}x{Y}x{Z} torus with {npc} node(s) per "
                    f"chip ({chips * npc} slots, {int(occupancy.sum())} taken by routers)",
                )
                return None
            chip = free[:n]
            coords = np.stack([chip % X, (chip // X) % Y, chip // (X * Y)], axis=1)
        flat_c = coords[:, 0] + X * (coords[:, 1] + Y * coords[:, 2])
        total = occupancy + np.bincount(flat_c, minlength=chips)
        over = np.nonzero(total > npc)[0]
        if len(over):
            c = int(over[0])
            pos = [c % X, (c // X) % Y, c // (X * Y)]
            self.err(
                path if "coordinates" in topo else ("topology",),
                "E-TORUS-FULL",
                f"{len(over)} torus position(s) hold more than {npc} node(s), e.g. {pos} "
                f"holds {int(total[c])} (clients and routers together)",
            )
            for i, r in enumerate(self.d["routers"]):
                if (
                    isinstance(r, dict)
                    and r.get("coords") == pos
                    and ("routers", i) not in self.dropped
                ):
                    self.err(
                        ("routers", i, "coords"),
                        "E-TORUS-FULL",
                        f"{r['name']} sits on over-filled position {pos}",
                    )
            return None
        return coords.astype(np.int32)

    def coords_csv(
        self, rel: str, names: list[str], dims: tuple[int, int, int], path: Path
    ) -> npt.NDArray[np.int64] | None:
        if os.path.isabs(rel) or ".." in rel.split("/"):
            self.err(path, "E-PATH", f"{rel!r} must be a path below the inventory's directory")
            return None
        shown = os.path.join(os.path.dirname(self.src.file), rel)
        base = os.path.realpath(os.path.dirname(os.path.abspath(self.src.file)))
        if os.path.commonpath([base, os.path.realpath(shown)]) != base:
            self.err(
                path,
                "E-PATH",
                f"{rel!r} resolves to a file outside the inventory's directory "
                "(through a symbolic link)",
            )
            return None
        try:
            text = read_text(shown)
        except InputError as exc:
            self.err(path, "E-TORUS-CSV", f"cannot read {rel}: {exc.diagnostics[0].message}")
            return None
        self.digest.update(text.encode())
        index = {m: k for k, m in enumerate(names)}
        coords = np.full((len(names), 3), -1, dtype=np.int64)
        seen_at: dict[int, int] = {}
        found: list[Diagnostic] = []

        def bad(lineno: int, code: str, msg: str) -> None:
            found.append(Diagnostic(shown, lineno, 1, "error", code, json_path(path), msg))

        for lineno, row in enumerate(csv.reader(text.splitlines()), 1):
            if not row or row[0].strip().startswith("#") or row[0].strip() == "node":
                continue
            if len(row) != 4:
                bad(lineno, "E-TORUS-CSV", f"expected 4 fields node,x,y,z, got {len(row)}")
                continue
            k = index.get(row[0].strip())
            if k is None:
                continue  # the CSV may list the whole machine (service nodes included)
            try:
                # int() would also take '１', '٣' or '1_000'; a map file has ASCII digits
                if not all(_CSV_INT.fullmatch(v) for v in row[1:]):
                    raise ValueError(row)
                xyz = [int(v) for v in row[1:]]
            except ValueError:
                bad(
                    lineno,
                    "E-TORUS-CSV",
                    f"coordinates of {row[0].strip()} must be whole numbers in ASCII digits",
                )
                continue
            if any(not 0 <= c < m for c, m in zip(xyz, dims, strict=True)):
                bad(
                    lineno,
                    "E-TORUS-COORD",
                    f"{row[0].strip()} at {xyz} is outside the torus {list(dims)} "
                    "(coordinates count from 0)",
                )
                continue
            if k in seen_at:
                bad(
                    lineno,
                    "E-TORUS-CSV",
                    f"{row[0].strip()} is listed twice (first at line {seen_at[k]})",
                )
                continue
            seen_at[k] = lineno
            coords[k] = xyz
        if len(found) > MAX_CSV_DIAGS:
            rest = len(found) - MAX_CSV_DIAGS
            found = found[:MAX_CSV_DIAGS]
            found.append(
                Diagnostic(
                    shown,
                    0,
                    0,
                    "error",
                    "E-TORUS-CSV",
                    json_path(path),
                    f"{rest} more problem(s) in {rel} not shown",
                )
            )
        self.diags.extend(found)
        missing = np.nonzero(coords[:, 0] < 0)[0]
        if len(missing) and not found:
            self.err(
                path,
                "E-TORUS-CSV",
                f"{rel} has no coordinates for {len(missing)} client(s), e.g. "
                f"{names[int(missing[0])]}",
            )
        if found or len(missing):
            return None
        return coords

    # -------------------------------------------------------------- fat tree
    def fat_tree(
        self, topo: dict[str, Any], names: list[str], leaves: list[tuple[str, str]]
    ) -> npt.NDArray[np.int32] | None:
        index = {m: k for k, m in enumerate(names)}
        leaf = np.full(len(names), -1, dtype=np.int32)
        leaf_id: dict[tuple[str, str], int] = {}
        fabric = topo["fabric"]
        if self.fabric_roles.get(fabric) != "compute":
            what = (
                "is not defined"
                if fabric not in self.fabric_roles
                else (f"has role {self.fabric_roles[fabric]!r}")
            )
            self.err(
                ("topology", "fabric"),
                "E-ATTACH-FABRIC",
                f"the clients' fabric {fabric!r} {what}; it must be a fabric with role 'compute'",
            )
            return None
        ok = True
        named = np.zeros(len(names), dtype=bool)  # named by some entry, attached or not
        all_parsed = True
        for ai, at in enumerate(topo["attach"]):
            p: Path = ("topology", "attach", ai)
            got = self.expand(at["nodes"], (*p, "nodes"))
            if got is None:
                ok = all_parsed = False
                continue
            members = got
            for m in members:
                if m in index:
                    named[index[m]] = True
            strangers = [m for m in members if m not in index]
            if strangers:
                self.err(
                    (*p, "nodes"),
                    "E-ATTACH-NODE",
                    f"{nodes.fold(strangers[:1000])} "
                    f"{'is not a client' if len(strangers) == 1 else 'are not clients'}"
                    " (not in any client group)",
                )
                ok = False
                continue
            first = at.get("first_port", 1)
            spec = {"switch": at["switch"], "port": first}
            if "leaf" in at:
                spec["leaf"] = at["leaf"]
            a = self.attach(spec, p, "compute", at["nodes"])
            if a is None:
                ok = False
                continue
            ports = self.switches[a.switch].leaf(a.leaf)
            last = first + len(members) - 1
            if ports is not None and last > ports.ports:
                self.err(
                    (*p, "nodes"),
                    "E-ATTACH-PORT",
                    f"{len(members)} nodes from port {first} need ports up to {last}, but "
                    f"{a.label()} has {ports.ports} external ports",
                )
                ok = False
                continue
            if self.switches[a.switch].fabric != fabric:
                self.err(
                    (*p, "switch"),
                    "E-ATTACH-FABRIC",
                    f"{a.switch} is on fabric {self.switches[a.switch].fabric!r}, "
                    f"not on the clients' fabric {fabric!r}",
                )
                ok = False
                continue
            twice = [m for m in members if leaf[index[m]] >= 0]
            if twice:
                self.err(
                    (*p, "nodes"),
                    "E-ATTACH-NODE",
                    f"{nodes.fold(twice[:1000])} attached twice (also by an earlier entry)",
                )
                ok = False
                continue
            lid = leaf_id.setdefault(a.module, len(leaf_id))
            for k, m in enumerate(members):
                leaf[index[m]] = lid
                self.client_ports[index[m]] = first + k
                self.claim_port(Attachment(a.switch, a.leaf, first + k), (*p, "nodes"), m)
        if all_parsed and not named.all():
            loose = [names[int(k)] for k in np.nonzero(~named)[0][:1000]]
            self.err(
                ("topology", "attach"),
                "E-ATTACH-NODE",
                f"{int((~named).sum())} client(s) are not attached to the fabric: "
                f"{nodes.fold(loose)}",
            )
            return None
        if not ok:
            return None
        leaves.extend(sorted(leaf_id, key=lambda m: leaf_id[m]))
        return leaf

    # -------------------------------------------------------------- GUID ranges
    def guid_range_checks(self, single: dict[Any, tuple[str, Path]]) -> None:
        """guid_base ranges must not overlap each other or any single GUID."""
        ranges = sorted(self.guid_ranges, key=lambda r: (r[0], self.src.where(r[3])))
        widest: tuple[int, int, str, Path, int] | None = None  # the range reaching furthest
        for r in ranges:
            if widest is not None and r[0] < widest[1]:
                first, later = sorted((widest, r), key=lambda x: self.src.where(x[3]))
                lo, hi = r[0], min(r[1], widest[1]) - 1
                self.err(
                    later[3],
                    "E-DUP-GUID",
                    f"GUIDs 0x{lo:016x}-0x{hi:016x} of {later[2]} are also GUIDs of "
                    f"{first[2]} (line {self.line(first[3])})",
                )
            if widest is None or r[1] > widest[1]:
                widest = r
        starts = [r[0] for r in ranges]
        for g, (owner, path) in sorted(single.items(), key=lambda kv: self.src.where(kv[1][1])):
            k = bisect.bisect_right(starts, g) - 1
            # ranges do not overlap (else reported above), so the nearest start decides
            if k >= 0 and g < ranges[k][1]:
                base, _stop, group, gpath, first_client = ranges[k]
                node = self.client_names[first_client + g - base]
                self.err(
                    path,
                    "E-DUP-GUID",
                    f"0x{g:016x} (GUID of {owner}) is also the GUID of {node} (guid_base of "
                    f"{group}, line {self.line(gpath)})",
                )

    # -------------------------------------------------------------- LNet numbers
    def net_checks(
        self,
        cnets: list[ClientNet],
        params: StrategyParams,
        fss: list[FileSystem],
        servers: list[tuple[int, Server]],
    ) -> None:
        """Storage nets are ``<storage_lnd><base + k>``: keep them off client nets and each other.

        A file system with ``net_base`` b numbers its nets b, b+1, ... (at most one per server);
        the others share ``strategy.storage_net_base``.  A collision at the first number is
        certain (error); one further up depends on how many nets the strategy makes (warning).
        """
        lnd = params.storage_lnd
        per_fs = Counter(s.fs for _, s in servers)
        ranges: list[tuple[int, int, str, Path]] = []  # first, last, owner, path
        shared = sum(per_fs[f.name] for f in fss if f.net_base is None)
        if shared:
            base = params.storage_net_base
            st_path: Path = (
                ("strategy", "storage_net_base")
                if "storage_net_base" in self.d.get("strategy", {})
                else ("filesystems",)
            )
            owners = ", ".join(f.name for f in fss if f.net_base is None and per_fs[f.name])
            ranges.append((base, base + shared - 1, f"storage nets of {owners}", st_path))
        for i, f in enumerate(fss):
            if f.net_base is not None and per_fs[f.name]:
                ranges.append(
                    (
                        f.net_base,
                        f.net_base + per_fs[f.name] - 1,
                        f"storage nets of {f.name}",
                        ("filesystems", i, "net_base"),
                    )
                )
        for _first, last, owner, path in ranges:
            if last > nodes.MAX_NET_NUMBER:
                self.warn(
                    path,
                    "W-NET-OVERLAP",
                    f"{owner} may need numbers up to {lnd}{last}, past "
                    f"{nodes.MAX_NET_NUMBER} (the solver refuses that)",
                    hint="lower the base",
                )
        for c in cnets:
            if c.net.lnd != lnd:
                continue
            cpath: Path = ("client_nets", self.cnet_pos[c.net], "name")
            for first, last, owner, path in ranges:
                if c.net.number == first:
                    self.err(
                        path,
                        "E-NET-COLLIDE",
                        f"{owner} start at {c.net}, which is client net {c.net} (line "
                        f"{self.line(cpath)})",
                        hint="move the base off the client net",
                    )
                elif first < c.net.number <= last:
                    self.warn(
                        path,
                        "W-NET-OVERLAP",
                        f"{owner} may run from {lnd}{first} up to {lnd}{last}, over client "
                        f"net {c.net} (line {self.line(cpath)})",
                    )
        ordered = sorted(ranges, key=lambda r: self.src.where(r[3]))
        for k, (f1, l1, o1, p1) in enumerate(ordered):
            for f2, l2, o2, p2 in ordered[k + 1 :]:
                if f1 == f2:
                    self.err(
                        p2,
                        "E-NET-COLLIDE",
                        f"{o2} and {o1} (line {self.line(p1)}) both start at {lnd}{f2}",
                    )
                elif f2 <= l1 and f1 <= l2:
                    self.warn(
                        p2,
                        "W-NET-OVERLAP",
                        f"{o2} ({lnd}{f2}-{lnd}{l2} at most) may overlap {o1} "
                        f"({lnd}{f1}-{lnd}{l1} at most, line {self.line(p1)})",
                    )
        # every client net needs a way out, and every listed net should be used
        counts = self.client_count
        routers_whole = not any(k == "routers" for k, _ in self.dropped)
        for c in cnets:
            cpath = ("client_nets", self.cnet_pos[c.net], "name")
            if c.net in self.router_nets:
                continue
            if counts[c.net] and routers_whole:
                self.err(
                    cpath,
                    "E-CLIENT-NET",
                    f"{counts[c.net]} client(s) are on {c.net}, but no router has an "
                    f"interface on it: they cannot reach the servers",
                )
            elif not counts[c.net] and routers_whole and self.clients_complete:
                self.warn(
                    cpath, "W-NET-UNUSED", f"client net {c.net} has no clients and no routers"
                )
        for i, f in enumerate(fss):
            if not per_fs[f.name] and not self.incomplete:
                self.warn(
                    ("filesystems", i, "name"), "W-FS-EMPTY", f"file system {f.name} has no servers"
                )

    # -------------------------------------------------------------- leaves
    def leaf_checks(self, servers: list[tuple[int, Server]]) -> None:
        by_leaf_srv: dict[tuple[str, str], list[tuple[int, Server]]] = defaultdict(list)
        by_leaf_rtr: Counter[tuple[str, str]] = Counter()
        for i, s in servers:
            by_leaf_srv[s.attach.module].append((i, s))
        for _, module in self.router_modules:
            by_leaf_rtr[module] += 1
        for module, held in sorted(by_leaf_srv.items()):
            if by_leaf_rtr[module] == 0:
                i = held[0][0]
                self.err(
                    ("servers", i, "attach"),
                    "E-LEAF-NO-ROUTER",
                    f"leaf {_label(module)} holds {len(held)} server(s) "
                    f"({nodes.fold(s.name for _, s in held)}) but no LNet router: "
                    "their traffic would have to cross the spine",
                    hint="attach at least one router to the same leaf module or TOR",
                )
        # compare leaves that hold the same kind of servers (an MDS TOR with 2 routers next
        # to OSS TORs with 8, as on Blue Waters, is a design, not a mistake)
        kinds: dict[tuple[str, ...], dict[tuple[str, str], int]] = defaultdict(dict)
        for module, held in by_leaf_srv.items():
            if by_leaf_rtr[module]:
                kind = tuple(sorted({s.role for _, s in held}))
                kinds[kind][module] = by_leaf_rtr[module]
        for kind, used in sorted(kinds.items()):
            if max(used.values()) == min(used.values()):
                continue
            counts = Counter(used.values())
            lo = min(used, key=lambda m: (used[m], m))
            self.warn(
                ("routers",),
                "W-ROUTER-SPREAD",
                f"routers are spread unevenly over the leaf modules that hold "
                f"{'+'.join(r.upper() for r in kind)} servers: "
                + ", ".join(f"{n} module(s) with {c} router(s)" for c, n in sorted(counts.items()))
                + f" (e.g. {_label(lo)} has {used[lo]})",
            )

    def compute_leaf_checks(self, routers: list[tuple[int, Router]]) -> None:
        # more than one router (IO node) per compute-fabric leaf: OpenSM ftree concentrates
        # their traffic on one spine (LANL's lesson)
        per_leaf: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
        for i, r in routers:
            if r.client_attach is not None:
                per_leaf[r.client_attach.module].append((i, r.name))
        for module, rs in sorted(per_leaf.items()):
            if len(rs) > 1:
                self.warn(
                    ("routers", rs[1][0], "client", "attach"),
                    "W-ROUTERS-PER-LEAF",
                    f"{len(rs)} routers ({nodes.fold(n for _, n in rs)}) share "
                    f"compute-fabric leaf {_label(module)}; OpenSM ftree routes their "
                    "traffic through few spines",
                    hint="spread IO nodes one per leaf",
                )


def check_source(src: Source) -> tuple[Site | None, list[Diagnostic]]:
    """Schema then meaning checks on a loaded document; never raises for a user mistake."""
    if not isinstance(src.data, dict):
        what = "an empty document" if src.data is None else _describe(src.data)
        return None, [
            src.diag(
                (), "E-EMPTY", f"the inventory must be a mapping (site:, routers:, ...), got {what}"
            )
        ]
    found = _schema_diags(src)
    found += _yaml_number_traps(src, {p for p, _ in found})
    diags = [d for _, d in found]
    dropped: set[tuple[str, int]] = set()
    for path, _d in found:
        item = _droppable(path)
        if item is None:  # the meaning checks cannot work around this one
            return None, sorted(diags)
        dropped.add(item)
    checker = _Checker(src, dropped)
    checker.digest.update(_canonical_bytes(src))
    try:
        site = checker.run()
    except nodes.NodeSyntaxError as exc:  # a syntax the schema let through
        checker.err((), "E-SYNTAX", str(exc))
        site = None
    out = diags + checker.diags
    if errors(out):
        site = None
    elif site is not None:
        out += _fabric_findings(src, site)
    return site, sorted(out)


def _fabric_findings(src: Source, site: Site) -> list[Diagnostic]:
    """Warnings that need the whole site (IO nodes on the same port position: OpenSM ftree),
    relocated to the line of the JSON path they name."""
    from lnetgen.fabric import io_port_findings  # fabric reads the model, not the inventory

    out = []
    for d in io_port_findings(site):
        path = tuple(
            int(part[1:-1]) if part.startswith("[") else part.lstrip(".")
            for part in re.findall(r"\[\d+\]|\.[^.\[]+", d.path.removeprefix("$"))
        )
        line, col = src.where(path)
        out.append(dataclasses.replace(d, file=src.file, line=line, col=col))
    return out


def _canonical_bytes(src: Source) -> bytes:
    return json.dumps(src.data, sort_keys=True, separators=(",", ":")).encode()


def check(path: str) -> tuple[Site | None, list[Diagnostic]]:
    """Load and check an inventory file; never raises for a user mistake."""
    try:
        src = load_file(path)
    except InputError as exc:
        return None, exc.diagnostics
    return check_source(src)


def load_site(path: str) -> tuple[Site, list[Diagnostic]]:
    """The validated ``Site`` and its warnings; raises ``InputError`` if there are errors."""
    site, diags = check(path)
    if site is None or errors(diags):
        raise InputError(diags)
    return site, diags
