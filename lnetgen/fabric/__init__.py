"""InfiniBand fabrics as port-level graphs: built from an inventory, written as an ibsim net file,
read back from ``ibnetdiscover`` output, checked for IO-node placement, and run through OpenSM.

* :mod:`~lnetgen.fabric.graph`: the port graph (:class:`IbNet`) and GUID spelling.
* :mod:`~lnetgen.fabric.cabling`: one fabric of a ``Site`` at port level (:func:`layout`).
* :mod:`~lnetgen.fabric.ibnetdiscover`: the net file written (:func:`export_ibsim`) and real
  ``ibnetdiscover`` output read (:func:`parse_ibnetdiscover`).
* :mod:`~lnetgen.fabric.infer`: leaves, spines and directors of a discovered fabric, as an
  inventory ``fabrics`` section (:func:`infer_fabric`, :func:`imported_yaml`).
* :mod:`~lnetgen.fabric.ports`: the IO-node port finding and the staggered port plan.
* :mod:`~lnetgen.fabric.digest`: which fabric a recorded OpenSM measurement was made on
  (W-OPENSM-STALE).
* :mod:`~lnetgen.fabric.simulate`: OpenSM on a simulated copy of a fabric (``fabric check``);
  :mod:`~lnetgen.fabric.trace` follows and counts the routes OpenSM configured.  Import them by
  name: only ``fabric check`` needs them, and ``simulate`` pulls in the OpenSM emitter.
  :mod:`~lnetgen.fabric.keep`: the directory ``fabric check --keep`` leaves the simulations in
  (a private staging tree, then one atomic, ownership-checked swap).
"""

from __future__ import annotations

from lnetgen.fabric.cabling import (
    Chip,
    Host,
    Layout,
    client_ports,
    fab_kind,
    fabric_hosts,
    fabric_of,
    layout,
)
from lnetgen.fabric.digest import fabric_digest, record_findings
from lnetgen.fabric.graph import IbLink, IbNet, IbNode, guid_int, guid_str
from lnetgen.fabric.ibnetdiscover import export_ibsim, parse_ibnetdiscover, render_net
from lnetgen.fabric.infer import Imported, ImportedHost, imported_yaml, infer_fabric
from lnetgen.fabric.ports import PortMove, apply_moves, io_port_findings, not_needed, plan_ports
from lnetgen.model import MAX_SWITCH_PORTS

__all__ = [
    "MAX_SWITCH_PORTS",
    "Chip",
    "Host",
    "IbLink",
    "IbNet",
    "IbNode",
    "Imported",
    "ImportedHost",
    "Layout",
    "PortMove",
    "apply_moves",
    "client_ports",
    "export_ibsim",
    "fab_kind",
    "fabric_digest",
    "fabric_hosts",
    "fabric_of",
    "guid_int",
    "guid_str",
    "imported_yaml",
    "infer_fabric",
    "io_port_findings",
    "layout",
    "not_needed",
    "parse_ibnetdiscover",
    "plan_ports",
    "record_findings",
    "render_net",
]
