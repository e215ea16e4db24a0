"""The finding codes of ``lnetgen verify`` (stable; listed in docs/verify.md), the counts of
pairs checked, and the result a proof returns."""

from __future__ import annotations

from dataclasses import dataclass, field

from lnetgen.diagnostics import Diagnostic, Severity

#: code -> (severity, what it means).  Errors fail the proof (exit 1); warnings do not.
CODES: dict[str, tuple[Severity, str]] = {
    "V-NO-ROUTE": (
        "error",
        "a sender has neither an NI on the destination's net nor a route to it",
    ),
    "V-UNREACHABLE": ("error", "routes to the destination's net exist but none of them works"),
    "V-BACKUP-ONLY": (
        "warning",
        "the destination is reached only through a route at a worse priority than the best "
        "one present (the primary routes are broken)",
    ),
    "V-GW-NOT-ON-NET": ("error", "a route's gateway NID is on no net the sender has an NI on"),
    "V-GW-UNKNOWN": ("error", "no host of the tree owns the route's gateway NID"),
    "V-GW-NOT-ROUTER": ("error", "the gateway's host does not forward (routing not enabled)"),
    "V-GW-NO-REMOTE-NI": (
        "error",
        "the gateway's host has no NI on the route's destination net (single-hop FGR)",
    ),
    "V-HOP": ("error", "the route's hop count is not declared as 1"),
    "V-UDSP-NO-ROUTE": (
        "warning",
        "a UDSP router rule prefers gateways for a net that no route of the host goes through "
        "(the rule does nothing)",
    ),
    "V-UDSP-DEAD": (
        "warning",
        "a UDSP router rule (dst and rte) with a priority action, which the kernel keeps but "
        "never applies",
    ),
    "V-ROUTE-LOCAL": (
        "error",
        "a route to a net the sender is on (the kernel refuses it: router.c lnet_add_route() "
        "returns -EEXIST, and lnetctl import reports the entry failed)",
    ),
    "V-TUNABLE": (
        "error",
        "a tunable the kernel would refuse or run as another value (out of range, retry_count "
        "not below transaction_timeout or with health off, peer_credits above credits or "
        "outside o2iblnd's clamp, credits above what kfilnd accepts)",
    ),
    "V-ASYMMETRIC": (
        "error",
        "the two ends of a routed pair use different routers: with drop_asym_route the "
        "messages arriving through the other routers are dropped",
    ),
    "V-MOUNT-UNREACHABLE": ("error", "a mount (MGS) NID is not reachable from a client"),
    "V-MOUNT-SPEC": ("error", "the mount spec does not name the MGS NIDs and the file system"),
    "V-MGS": (
        "error",
        "the MGS or an --mgsnode NID is not what the file system declares, or the MGS is "
        "formatted (mkfs.lustre --mgs) twice or not at all",
    ),
    "V-NID-NOT-CLIENT": (
        "error",
        "a NID handed to clients (mount, --mgsnode, --servicenode) is not one of the "
        "server's client NIDs",
    ),
    "V-CLIENT-NID": (
        "warning",
        "one client NID of a server is unreachable from a client that reaches another",
    ),
    "V-NID-NO-NI": ("error", "a server's NID is on a net its file has no NI on"),
    "V-FAILOVER": ("error", "a failover partner that is not a server of the same file system"),
    "V-FAILOVER-NIDS": (
        "error",
        "a target's --servicenode (--failnode) options leave out its server or failover "
        "partner, or its --mgsnode options or the mount NIDs leave out the MGS or the MGS's "
        "failover partner",
    ),
    "V-NO-NI": ("error", "a host file configures no NI at all"),
    "V-HOST-MISSING": ("error", "a host the manifest names has no readable file or dump"),
    "V-HOST-UNKNOWN": ("warning", "a dump of a host the manifest does not name"),
    "V-DUP-NID": ("error", "two hosts claim the same NID"),
    "V-NID-SOURCE": ("warning", "a file NIDs were to be read from could not be read"),
    "V-NOTE": ("warning", "a note of the reader (a NI or route shown down, ignored entries)"),
}

#: The kinds of pairs, in the order they are reported.
KINDS = ("client-class->server", "server->server", "server->client-class")


@dataclass
class Count:
    """Pairs of one kind: checked, holding at the best priority, holding only at a worse
    priority, failing."""

    pairs: int = 0
    hold: int = 0
    backup_only: int = 0
    fail: int = 0

    def add(self, status: str, n: int = 1) -> None:
        """Count ``n`` pairs of ``status`` (``hold``, ``backup`` or ``fail``)."""
        self.pairs += n
        if status == "hold":
            self.hold += n
        elif status == "backup":
            self.backup_only += n
        else:
            self.fail += n


@dataclass
class VerifyResult:
    """What a proof found: pair counts per file system and kind, and the findings."""

    source: str
    manifest: str
    counts: dict[str, dict[str, Count]] = field(default_factory=dict)
    findings: list[Diagnostic] = field(default_factory=list)
    ping: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.findings if d.severity == "error"]

    @property
    def exit_code(self) -> int:
        """1 when any finding is an error, else 0."""
        return 1 if self.errors else 0

    def total(self, kind: str) -> Count:
        """The counts of ``kind`` summed over the file systems."""
        out = Count()
        for per_kind in self.counts.values():
            c = per_kind.get(kind)
            if c is not None:
                out.pairs += c.pairs
                out.hold += c.hold
                out.backup_only += c.backup_only
                out.fail += c.fail
        return out


class Collector:
    """Findings without repeats (the same problem seen from many pairs is reported once)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str, int, str], Diagnostic] = {}
        self.calls = 0  # every add, repeats included: whether a check found anything

    def add(
        self, code: str, file: str, line: int, col: int, path: str, message: str, hint: str = ""
    ) -> None:
        self.calls += 1
        key = (code, file, line, message)
        if key not in self._seen:
            severity = CODES[code][0]
            self._seen[key] = Diagnostic(file, line, col, severity, code, path, message, hint)

    def extend(self, diags: list[Diagnostic]) -> None:
        for d in diags:
            self._seen.setdefault((d.code, d.file, d.line, d.message), d)

    def sorted(self) -> list[Diagnostic]:
        return sorted(self._seen.values())
