"""A directory ``lnetgen collect`` wrote, read as what it is: a directory of per-host dumps.

Decision, as an administrator would expect it: collect's ``manifest.json`` only tells what
collect did (which hosts it reached, which failed and why); it does not choose the files.  A
dump added by hand for a host whose collect failed (``lnetctl export > DIR/$(hostname
-s).yaml``), and a modprobe file beside an export, are read like in any directory of dumps
(``lnetgen.live.assemble``), merged with the host's other dumps.  Only the files collect writes
that are no dump (``manifest.json``, ``failed.txt``) are left out.  The reasons collect
recorded for the hosts it could not read go to ``LiveSet.collect_failed``, so that a host
still without a dump is reported with that reason.
"""

from __future__ import annotations

from typing import Any

from lnetgen import jsonloc, nodes
from lnetgen.diagnostics import Diagnostic, InputError, json_path
from lnetgen.live.errors import clip
from lnetgen.write import manifest_kind

#: The files collect writes beside the dumps that are not dumps.
NOT_DUMPS = frozenset({"manifest.json", "failed.txt"})
#: Longest reason kept per failed host (collect keeps 200 characters of its own).
MAX_REASON = 300


def is_collect(doc: Any) -> bool:
    """True when the manifest ``doc`` is one ``lnetgen collect`` wrote."""
    return isinstance(doc, dict) and manifest_kind(doc) == "collect"


def collect_failures(doc: Any, text: str, mpath: str) -> dict[str, str]:
    """Host -> why collect could not read it, from the collect manifest ``doc`` (whose text is
    ``text``), each reason made printable and cut to ``MAX_REASON``.  Raises ``InputError``
    (``E-LIVE-PATH``, at its line and JSON path) when ``collected.failed`` is not an object of
    host names to texts."""
    collected = doc.get("collected", {})
    failed = collected.get("failed", {}) if isinstance(collected, dict) else None
    where: tuple[str | int, ...] = ("collected", "failed")
    if not isinstance(failed, dict):
        raise _bad(mpath, text, where, "should map host names to the reasons they failed")
    out: dict[str, str] = {}
    for host, why in failed.items():
        if nodes.HOSTNAME_RE.match(host) is None or not isinstance(why, str):
            raise _bad(
                mpath, text, (*where, host), f"'{clip(host)}': expected a host name and a text"
            )
        out[host] = clip(why, MAX_REASON)
    return out


def _bad(mpath: str, text: str, where: tuple[str | int, ...], message: str) -> InputError:
    diag = Diagnostic(mpath, 0, 0, "error", "E-LIVE-PATH", json_path(where), clip(message, 300))
    return InputError(jsonloc.placed([diag], mpath, text))
