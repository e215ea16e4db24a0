"""Acknowledged warnings: a top-level ``acknowledge: [{code: W-..., reason: "..."}]`` says a
site knows about a warning and accepts it, so commands stop repeating it.

``split`` takes the diagnostics of a check and returns (kept, acknowledged): every warning whose
code is acknowledged moves to the second list (``validate`` still lists it, with the reason);
errors cannot be acknowledged.  Reports E-ACK-CODE for an entry that names no warning lnetgen
gives and W-ACK-UNUSED for one that matches nothing (it may be stale; only said when the checks
ran to the end, since an error stops some checks and their warnings).

The warnings the default strategy's plan gives (``PLAN_WARNINGS``: the modprobe files cannot be
written) come after the inventory's checks, from ``lnetgen validate``'s dry solve and from
``generate``: the checks leave their entries unjudged (``unjudged``), the dry solve splits its
own findings by them (``only``), and ``generate`` drops what they name (``codes``).  A site
that deploys the lnetctl YAML on purpose (Spider's 4 KB routes) can so accept them.
"""

from __future__ import annotations

import dataclasses

from lnetgen.diagnostics import Diagnostic, errors
from lnetgen.yamlsrc import Source

#: Warnings that come from outside the inventory's own checks (the fabric's IO port findings).
OTHER_WARNINGS = frozenset({"W-IO-SAME-PORT"})
#: Warnings of the default strategy's plan (``lnetgen.emit.findings``), not of the checks.
PLAN_WARNINGS = frozenset({"W-MODPROBE-SKIPPED", "W-ANSIBLE-NO-MODPROBE"})


def _entries(src: Source) -> list[tuple[int, str, str]]:
    """(index, code, reason) of every well-formed ``acknowledge`` entry naming a warning."""
    data = src.data if isinstance(src.data, dict) else {}
    entries = data.get("acknowledge")
    if not isinstance(entries, list):  # absent, or the schema already said what is wrong
        return []
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        code, reason = entry.get("code"), entry.get("reason")
        if isinstance(code, str) and isinstance(reason, str) and code.startswith("W-"):
            out.append((i, code, reason))  # the schema says only warnings (W-...) can be named
    return out


def codes(src: Source) -> frozenset[str]:
    """The warning codes the inventory acknowledges."""
    return frozenset(code for _i, code, _reason in _entries(src))


def split(
    src: Source,
    diags: list[Diagnostic],
    known: frozenset[str],
    *,
    unjudged: frozenset[str] = frozenset(),
    only: frozenset[str] | None = None,
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(kept, acknowledged) diagnostics; ``known`` holds every warning code lnetgen gives.
    An entry naming a code of ``unjudged`` is never said to match nothing (``diags`` cannot
    hold it); with ``only``, entries naming other codes are left alone (judged elsewhere)."""
    entries = _entries(src)
    if not entries:
        return diags, []
    reasons: dict[str, tuple[int, str]] = {}
    extra: list[Diagnostic] = []
    for i, code, reason in entries:
        if only is not None and code not in only:
            continue
        if code not in known:
            extra.append(
                src.diag(
                    ("acknowledge", i, "code"),
                    "E-ACK-CODE",
                    f"{code!r} is not a warning lnetgen gives; only warnings can be acknowledged",
                    hint="known warnings: " + ", ".join(sorted(known)),
                )
            )
        else:
            reasons.setdefault(code, (i, reason))
    kept: list[Diagnostic] = []
    acked: list[Diagnostic] = []
    used: set[str] = set()
    for d in diags:
        if d.severity == "warning" and d.code in reasons:
            used.add(d.code)
            acked.append(dataclasses.replace(d, hint=f"acknowledged: {reasons[d.code][1]}"))
        else:
            kept.append(d)
    complete = not errors(diags)  # with errors, some checks (and their warnings) did not run
    for code, (i, _reason) in sorted(reasons.items()):
        if complete and code not in used and code not in unjudged:
            kept.append(
                src.diag(
                    ("acknowledge", i),
                    "W-ACK-UNUSED",
                    f"{code} is acknowledged but the site gives no such warning; remove the entry",
                    severity="warning",
                )
            )
    return sorted(kept + extra), acked
