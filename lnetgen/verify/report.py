"""How a ``VerifyResult`` is shown: text (findings, then the pairs checked per file system and
kind, then the verdict) and a JSON-ready dict for scripts."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from lnetgen.verify.findings import KINDS, VerifyResult


def format_text(result: VerifyResult) -> str:
    """The text report, one finding per line, ending with the verdict line."""
    lines = [d.format() for d in result.findings]
    lines.append(f"verify {result.source} (manifest {result.manifest}): pairs checked")
    for fs, per_kind in result.counts.items():
        for kind in KINDS:
            c = per_kind[kind]
            lines.append(
                f"  {fs:<12} {kind:<22} {c.pairs:>8} pairs  {c.hold:>8} hold  "
                f"{c.backup_only:>6} backup only  {c.fail:>6} fail"
            )
    nerr = len(result.errors)
    nwarn = len(result.findings) - nerr
    verdict = "FAILED" if nerr else "proved"
    lines.append(f"verify: {verdict} ({nerr} error(s), {nwarn} warning(s))")
    return "\n".join(lines) + "\n"


def to_dict(result: VerifyResult) -> dict[str, Any]:
    """``result`` as plain data: source, manifest, counts, findings, ok."""
    return {
        "source": result.source,
        "manifest": result.manifest,
        "ok": not result.errors,
        "counts": {
            fs: {kind: asdict(per_kind[kind]) for kind in KINDS}
            for fs, per_kind in result.counts.items()
        },
        "totals": {kind: asdict(result.total(kind)) for kind in KINDS},
        "findings": [d.as_dict() for d in result.findings],
    }
