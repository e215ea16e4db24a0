"""What each step of ``plan_changes`` interrupts, as the step says it (``Step.outage``): the
texts of the outages a change of addresses, nets or routes brings (``lnetgen.diff.steps``)."""

from __future__ import annotations

#: How a target's NIDs are replaced in the configuration logs.  The MGS refuses
#: ``lctl replace_nids`` while any other device runs or any client is connected
#: (``mgs_replace_nids()`` -> ``only_mgs_is_running()``, EBUSY; lustre/mgs/mgs_llog.c), so it is
#: the whole file system that stops, not the moved servers' targets alone (the Lustre
#: manual, "Changing a Server NID").
REPLACE_NIDS = (
    "stop the whole file system first (unmount every client, then every MDT and OST: the MGS "
    "refuses `lctl replace_nids` while any other target runs or a client is connected), mount "
    "the MGS alone with `-o nosvc` (the MDT it shares a device with stays down), run `lctl "
    "replace_nids FSNAME-OSTxxxx NIDS` on it for every target of the servers in this step "
    "(each target's NIDs, its failover partner's after a ':'), or a writeconf of every target, "
    "then unmount it and start the file system again"
)
#: A NID change cannot be made live: servers' NIDs are recorded in the file system's
#: configuration logs, other hosts must restart LNet to take a new interface address.
SERVER_NID_OUTAGE = (
    "file system outage: a server's NID is in the configuration logs -- " + REPLACE_NIDS
)
#: A server that leaves a net changes its NID just the same (the net is part of it).
SERVER_NET_OUTAGE = (
    "file system outage: the server leaves a net, so its NID there changes, and its targets "
    "are registered under the old NID in the MGS configuration logs (clients cannot reach "
    "them once that net goes) -- run this step while the file system is stopped: "
    + REPLACE_NIDS
    + " (an MGS's clients mount by its NID: their mount commands change too)"
)
HOST_NID_OUTAGE = (
    "host outage: LNet takes the new address only when restarted (`lnetctl lnet unconfigure` "
    "and configure); drain routers and idle clients first"
)
#: A drained router's restart cuts no path: its peers use their other gateways meanwhile.
ROUTER_NID_OUTAGE = (
    "router outage, paths kept: LNet takes the new address only when restarted (`lnetctl lnet "
    "unconfigure` and configure); the router is drained and its peers use their other "
    "gateways -- keep routing off when LNet is back (`lnetctl set routing 0`): it is enabled "
    "again below, once its peers have routes through the new address"
)
#: ... and the restart of one that could not be drained does (``cut_outage``).
ROUTER_CUT_OUTAGE = (
    "file system outage: LNet takes the new address only when restarted (`lnetctl lnet "
    "unconfigure` and configure), and this router is the only gateway some hosts have to "
    "{nets}: those paths are down until LNet is back on it (or give those nets another gateway "
    "first)"
)
ROUTER_UNKNOWN_OUTAGE = (
    "router outage: LNet takes the new address only when restarted (`lnetctl lnet unconfigure` "
    "and configure); the paths through it are down until its peers' router checks mark it "
    "down and they use their other gateways, if they have any"
)
#: The outage of ``_moving_adds``.
MOVING_ADDS_OUTAGE = (
    "file system outage: run with the file system stopped for the servers' NID change of the "
    "next step -- until those servers leave the net, they have no route back through the new "
    "gateways, and a reply through one is dropped (drop_asym_route)"
)
