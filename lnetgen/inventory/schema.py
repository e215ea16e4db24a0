"""The inventory's JSON Schema, and its errors translated into located, specific diagnostics.

jsonschema says "'rtr 1' does not match '^[A-Za-z0-9]...$'"; an administrator is told "'rtr 1' is
not safe as a host name" at the line and column it was written, with a hint when YAML 1.1 read
the value as something else or a key looks like a typo of a known one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema

from lnetgen import nodes, resources
from lnetgen.diagnostics import Diagnostic
from lnetgen.inventory.messages import clip, describe, did_you_mean, show
from lnetgen.inventory.yaml11 import read_as
from lnetgen.tunables import BY_NAME, default_hint
from lnetgen.yamlsrc import Path, Source

SITE_SCHEMA = "site.schema.json"

#: Unknown keys reported per mapping; the rest are counted.
MAX_UNKNOWN_KEYS = 20

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
    nodes.IFACE_PATTERN: (
        "E-IFACE",
        "is not a Linux interface name (a letter, then letters, digits, '_', '.', '-', at most "
        "15 characters, optionally one IP-alias label ':1'; not a word YAML reads as a boolean "
        "or null such as 'on' or 'null')",
    ),
    "^0x[0-9a-fA-F]{16}$": (
        "E-GUID",
        "is not a 64-bit GUID written as 0x followed by 16 hex digits "
        "(OpenSM reads an unprefixed GUID as octal)",
    ),
    "^([0-9.]+|[0-9A-Fa-f:]+)@[a-z][a-z0-9]*$": (
        "E-NID",
        "is not a NID (address@net, e.g. 27@gni, 10.1.3.1@o2ib, fd00::3:1@tcp)",
    ),
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
_IP_PATTERN_START = "^(?:(25[0-5]"

_TYPE_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping (key: value)",
    "null": "nothing",
}


def strict_int(_checker: object, instance: object) -> bool:
    """The integer type check of lnetgen's validators (the inventory's and the plan's)."""
    # jsonschema counts 1.0 as an integer; the checks below do arithmetic and ranges with it
    return isinstance(instance, int) and not isinstance(instance, bool)


@cache
def _anchored(pattern: str) -> re.Pattern[str]:
    # JSON Schema patterns are ECMA-262, where '$' is the end of the text; Python's '$' also
    # matches before a final newline, which would let "rtr01\n" through to a config file
    return re.compile(pattern[:-1] + r"\Z" if pattern.endswith("$") else pattern)


def anchored_pattern(
    _validator: Any, pattern: str, instance: object, _schema: object
) -> Iterator[Any]:
    """The ``pattern`` keyword of lnetgen's validators, ``$`` anchored at the end of the text."""
    if isinstance(instance, str) and not _anchored(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _validator() -> Any:
    base = jsonschema.Draft202012Validator
    cls = jsonschema.validators.extend(
        base,
        validators={"pattern": anchored_pattern},
        type_checker=base.TYPE_CHECKER.redefine("integer", strict_int),
    )
    return cls(resources.schema(SITE_SCHEMA))


def top_keys() -> frozenset[str]:
    """The keys an inventory's top level may hold."""
    return frozenset(resources.schema(SITE_SCHEMA).get("properties", {}))


def schema_diags(src: Source) -> list[tuple[Path, Diagnostic]]:
    """Every schema error of the document, each with the path it is confined to."""
    out: list[tuple[Path, Diagnostic]] = []
    for err in _validator().iter_errors(src.data):
        out.extend(_translate(src, err))
    # one error for one value: ``credits: .inf`` is not a whole number, which says it all; its
    # range error beside it ("inf is outside 1-2147483647") said it twice
    typed = {path for path, d in out if d.code == "E-SCHEMA-TYPE"}
    return [(path, d) for path, d in out if d.code != "E-SCHEMA" or path not in typed]


def droppable(path: Path) -> tuple[str, int] | None:
    """The list entry a schema error can be confined to (routers[i], servers[i], clients[i])."""
    if len(path) >= 2 and path[0] in ("routers", "servers", "clients") and isinstance(path[1], int):
        return str(path[0]), path[1]
    return None


def _type_diag(
    src: Source, path: Path, instance: object, expected: Any, schema: object = None
) -> tuple[str, str]:
    """Message and hint for a type error, naming the YAML 1.1 trap when there is one.

    The hint for a plain scalar where text is expected proposes the same text quoted only
    when the quoted text would pass ``schema`` (its pattern, its allowed words): ``z: 15`` for
    a rate is not cured by ``"15"``, which has no unit, so its hint is what the value must
    look like (the schema's description: ``"3020 MB/s", "2.6 GB/s"``) or the allowed words,
    as the hint of the quoted value's own error says; an administrator who follows a hint
    expects the next run to pass."""
    want = [str(expected)] if isinstance(expected, str) else [str(w) for w in expected]
    words = " or ".join(_TYPE_WORDS.get(w, w) for w in want)
    raw = src.raw.get(path)
    plain = raw is not None and raw[1] is None
    text = raw[0] if raw is not None else ""
    hint = ""
    if plain and not isinstance(instance, str):
        if instance is None:
            got = "an empty value" if text in ("", "~") else f"{text}, which YAML reads as null"
            hint = "write the value, or quote it if it is text"
        else:
            got = f"{clip(text)}, which YAML 1.1 reads as {read_as(text, instance)}"
            if "string" in want:
                hint = _quote_hint(text, schema)
    elif isinstance(instance, str) and "integer" in want:
        got = describe(instance)
        if re.fullmatch(r"[+-]?0[0-9]+", instance):
            hint = f"write {int(instance)} without leading zeros (and without quotes)"
        elif re.fullmatch(r"[+-]?[0-9]+", instance):
            hint = f"drop the quotes: {instance}"
    else:
        got = describe(instance)
    return f"expected {words}, got {got}", hint


def _quote_hint(text: str, schema: object) -> str:
    """``quote it: "<text>"`` when the quoted text fits ``schema``, else what would fit."""
    sub = schema if isinstance(schema, dict) else {}
    pattern = sub.get("pattern")
    allowed = sub["enum"] if isinstance(sub.get("enum"), list) else None
    if "const" in sub:
        allowed = [sub["const"]]
    if isinstance(pattern, str) and not _anchored(pattern).search(text):
        # the hint the quoted value's own error gives, else what that error says
        _code, what, about = pattern_diag(pattern, text, str(sub.get("description", "")))
        return about or f"quoting is not enough: {what}"
    if allowed is not None and text not in allowed:
        return f"quoting is not enough: one of {', '.join(str(a) for a in allowed)}"
    return f'quote it: "{clip(text)}"'


def _unknown_keys(src: Source, err: Any, path: Path) -> Iterator[tuple[Path, Diagnostic]]:
    """One E-SCHEMA-KEY per unknown key of a mapping (at most ``MAX_UNKNOWN_KEYS``)."""
    known = set(err.schema.get("properties", {}))
    extra = sorted(set(err.instance) - known, key=lambda k: src.where((*path, k)))
    for key in extra[:MAX_UNKNOWN_KEYS]:
        yield (
            (*path, key),
            src.diag(
                (*path, key),
                "E-SCHEMA-KEY",
                f"unknown key {show(key)}",
                hint=did_you_mean(key, known),
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


def _translate(src: Source, err: Any) -> Iterator[tuple[Path, Diagnostic]]:
    if err.validator in ("oneOf", "anyOf") and err.context:
        # report the most relevant branch instead of one vague "not valid under any"
        err = jsonschema.exceptions.best_match(err.context)
    path: Path = tuple(err.absolute_path)
    inst = err.instance
    kind = err.validator
    if kind == "additionalProperties" and isinstance(inst, dict):
        yield from _unknown_keys(src, err, path)
        return
    hint = str(err.schema.get("description", "")) if isinstance(err.schema, dict) else ""
    description = hint
    code, message = "E-SCHEMA", err.message
    if kind == "required":
        missing = [k for k in err.validator_value if isinstance(inst, dict) and k not in inst]
        m = re.match(r"^'(.*)' is a required property$", err.message)
        key = m.group(1) if m else (missing[0] if missing else "?")
        code, message, hint = "E-SCHEMA-REQUIRED", f"missing required key {key!r}", ""
    elif kind == "type":
        code = "E-SCHEMA-TYPE"
        message, trap = _type_diag(src, path, inst, err.validator_value, err.schema)
        hint = trap or hint
    elif kind == "pattern":
        code, message, hint = pattern_diag(str(err.validator_value), inst, hint)
    elif kind in ("enum", "const"):
        allowed = err.validator_value if kind == "enum" else [err.validator_value]
        code = "E-SCHEMA-VALUE"
        message = f"{show(inst)} is not one of: {', '.join(str(a) for a in allowed)}"
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
        message = f"{show(inst)} is longer than {err.validator_value} characters"
    elif kind in ("minimum", "maximum"):
        lo, hi = err.schema.get("minimum"), err.schema.get("maximum")
        if lo is not None and hi is not None:
            message = f"{show(inst)} is outside {lo}-{hi}"
        elif lo is not None:
            message = f"{show(inst)} is less than {lo}"
    # a tunable's kernel default: that of the LNDs the site runs, in every error of it
    tunable = bool(path) and path[0] == "tunables" and str(path[-1]) in BY_NAME
    if kind in ("minimum", "maximum", "type") and hint == description and tunable:
        hint = default_hint(str(path[-1]), _site_lnds(src.data))
    yield path, src.diag(path, code, message, hint=hint)


def _site_lnds(data: object) -> list[str]:
    """The LNDs an inventory names (its client nets', its storage LND), as written: the
    kernel defaults a tunable's hint quotes are theirs (kfilnd's on a Slingshot site, not
    o2iblnd's and gnilnd's)."""
    if not isinstance(data, dict):
        return []
    out = []
    for net in data.get("client_nets") or []:
        name = net.get("name") if isinstance(net, dict) else None
        if isinstance(name, str):
            out.append(name.rstrip("0123456789"))
    strategy = data.get("strategy")
    lnd = strategy.get("storage_lnd", "o2ib") if isinstance(strategy, dict) else "o2ib"
    out.append(str(lnd))
    return out


def pattern_diag(pattern: str, inst: object, hint: str) -> tuple[str, str, str]:
    """Code, message and hint for a value that does not match a schema pattern."""
    found = _PATTERN_KINDS.get(pattern)
    if found:
        code, what = found
        return code, f"{show(inst)} {what}", ""
    if pattern.startswith(_IPV4_PATTERN_START):
        return "E-SCHEMA", f"{show(inst)} is not an IPv4 address", ""
    if pattern.startswith(_IP_PATTERN_START):
        return "E-SCHEMA", f"{show(inst)} is not an IPv4 or IPv6 address", ""
    return "E-SCHEMA", f"{show(inst)} does not have the expected form", hint
