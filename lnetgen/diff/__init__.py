"""``lnetgen diff``: compare a proposed plan with live LNet state per host, fold the hosts that
need the same changes, and order those changes as safe ``lnetctl`` steps."""

from lnetgen.diff.compare import diff
from lnetgen.diff.expected import Expected, expected_states
from lnetgen.diff.report import diff_lines, format_steps, format_text, to_dict
from lnetgen.diff.result import (
    CLIENT,
    ROUTER,
    SERVER,
    DiffResult,
    Group,
    HostDiff,
    NetEntry,
    RouteChange,
    RouteEntry,
)
from lnetgen.diff.steps import Step, plan_changes, route_add, route_del

__all__ = [
    "CLIENT",
    "ROUTER",
    "SERVER",
    "DiffResult",
    "Expected",
    "Group",
    "HostDiff",
    "NetEntry",
    "RouteChange",
    "RouteEntry",
    "Step",
    "diff",
    "diff_lines",
    "expected_states",
    "format_steps",
    "format_text",
    "plan_changes",
    "route_add",
    "route_del",
    "to_dict",
]
