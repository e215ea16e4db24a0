"""The Lustre release a site's hosts run (inventory ``lustre:``), and what it decides.

Each fact carries the lustre-release source it was read from:

* ``routes=``, ``ip2nets=`` and ``forwarding=`` module parameters are compiled out from
  2.19.53 (``lnet/lnet/api-ni.c``: ``#if LUSTRE_VERSION_CODE < OBD_OCD_VERSION(2, 19, 53, 0)``
  around both ``module_param`` lines and the only call of ``lnet_rtrpools_alloc``, the sole
  reader of ``forwarding``; LU-20441).  Hosts on such a release take their routes and routing
  from ``/etc/lnet.conf`` only, so their modprobe file carries ``networks=`` and tunables;
* ``lnet.service`` (``lustre/scripts/systemd/lnet.service.in``) runs ``modprobe lnet``,
  ``lnetctl lnet configure`` and ``lnetctl import /etc/lnet.conf``, and ``lnetctl lnet
  configure`` without ``--all`` ignores the ``networks=``, ``routes=`` and ``forwarding=`` module
  parameters (``lnet/utils/lnetctl.c: jt_config_lnet`` sets ``NLM_F_EXCL``): on a host that
  starts LNet that way, the lnetctl YAML is the whole configuration, whatever the release;
* UDSP rules (``lnetctl udsp``; router rules only as ``lnetctl udsp add``: ``lnetgen.udsp``)
  arrived in 2.15;
* mkfs.lustre formats an ldiskfs MDT with ``ea_inode`` from 2.13 (LU-1732), which lifts the
  stripe limit from 160 to 2000 (``lnetgen advise stripes``);
* lnetgen writes for 2.12 and later (the oldest release whose lnetctl imports the YAML layout
  ``lnetctl export`` prints with explicit ``hop`` and ``priority``).

Without a ``lustre:`` section the release is unknown: both paths are written as before, and
``README.txt`` says which applies when.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

Version = tuple[int, ...]

#: ``routes=``, ``ip2nets=`` and ``forwarding=`` are compiled out from this release on.
KERNEL_ROUTES_REMOVED: Version = (2, 19, 53)
#: User Defined Selection Policies (``lnetctl udsp``).
UDSP_SINCE: Version = (2, 15)
#: mkfs.lustre formats an ldiskfs MDT with ``ea_inode`` from this release on (LU-1732,
#: lustre/utils/libmount_utils_ldiskfs.c); MDTs formatted earlier keep 160 unless tuned.
EA_INODE_SINCE: Version = (2, 13)
#: The oldest release lnetgen writes for.
OLDEST: Version = (2, 12)
ROLES = ("client", "router", "server")

_VERSION = re.compile(r"[0-9]{1,3}(\.[0-9]{1,3}){1,3}")


def parse_version(text: str) -> Version:
    """``"2.15.6"`` -> ``(2, 15, 6)``; raises ``ValueError`` for anything else."""
    if not _VERSION.fullmatch(text):
        raise ValueError(f"{text!r} is not a Lustre release (e.g. 2.15.6)")
    return tuple(int(p) for p in text.split("."))


def show(version: Version) -> str:
    return ".".join(str(p) for p in version)


@dataclass(frozen=True)
class Targets:
    """The release of each role's hosts (``None`` everywhere: not stated)."""

    per_role: Mapping[str, Version] = field(default_factory=dict)
    #: write UDSP router rules (``udsp/<class>.sh``) next to route priorities (``lustre.udsp``;
    #: clients on 2.15+)
    udsp: bool = False

    def of(self, role: str) -> Version | None:
        return self.per_role.get(role)

    @property
    def known(self) -> bool:
        return bool(self.per_role)

    def kernel_routes(self, role: str) -> bool:
        """The role's release still parses ``routes=`` and ``forwarding=`` (unknown: yes)."""
        v = self.of(role)
        return v is None or v < KERNEL_ROUTES_REMOVED

    def describe(self) -> str:
        """``2.15.6 on clients, routers and servers`` / per role when they differ."""
        if not self.per_role:
            return "not stated in the inventory (lustre.version)"
        by: dict[Version, list[str]] = {}
        for role in ROLES:
            v = self.per_role.get(role)
            if v is not None:
                by.setdefault(v, []).append(role + "s")
        parts = []
        for v, roles in by.items():
            names = roles[0] if len(roles) == 1 else ", ".join(roles[:-1]) + " and " + roles[-1]
            parts.append(f"{show(v)} on {names}")
        return "; ".join(parts)


NO_TARGETS = Targets()


def targets(spec: Mapping[str, str] | None, udsp: bool = False) -> Targets:
    """The ``lustre:`` section as :class:`Targets` (already checked by the inventory)."""
    if not spec:
        return NO_TARGETS
    base = parse_version(spec["version"])
    return Targets(
        {role: parse_version(spec[role]) if role in spec else base for role in ROLES}, udsp
    )


__all__ = [
    "EA_INODE_SINCE",
    "KERNEL_ROUTES_REMOVED",
    "NO_TARGETS",
    "OLDEST",
    "ROLES",
    "UDSP_SINCE",
    "Targets",
    "Version",
    "parse_version",
    "show",
    "targets",
]
