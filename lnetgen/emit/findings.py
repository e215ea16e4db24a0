"""What ``generate``'s emitters would say about a plan, found without rendering a file.

``lnetgen validate`` dry-solves the default strategy (``lnetgen.drysolve``); it runs these
checks on that plan, as ``generate`` with the default formats would meet them, so an inventory
that validates without a warning generates without one:

* W-MODPROBE-SKIPPED: the modprobe files cannot be written (an IPv6 gateway, a ``routes=`` or
  ``networks=`` over Linux's 1,024-byte module parameter limit);
* W-ANSIBLE-NO-MODPROBE: the Ansible variables follow (no ``lustre_lnet_module_*``);
* E-ANSIBLE-NAMES: a client class's Ansible group collides, or a host is in two roles.

The warnings that follow from the inventory alone (W-NO-GUID, W-MODPROBE-TARGET) are the
inventory check's (``lnetgen.inventory.output``).  Each finding names its inventory path; the
caller that holds the document gives it a line (``lnetgen.drysolve.locate``).

Cost: the modprobe check formats every client class's ``routes=`` once (the route sets are
formatted once each and joined), which ``generate`` does too; on Spider (nearest-neighbor,
16,873 classes) and Blue Waters it adds well under a second to ``validate``.
"""

from __future__ import annotations

from lnetgen.diagnostics import Diagnostic
from lnetgen.emit import ansible
from lnetgen.emit.base import Context
from lnetgen.model import Site
from lnetgen.plan import Plan


def plan_findings(site: Site, plan: Plan) -> list[Diagnostic]:
    """The default formats' findings on ``plan`` (none of them writes a file)."""
    ctx = Context(plan, site)
    out: list[Diagnostic] = []
    skipped = ansible.modprobe_skipped(ctx)
    if skipped is not None:
        out += [skipped, ansible.no_modprobe(skipped)]
    out += ansible.name_problems(ctx)
    return out


__all__ = ["plan_findings"]
