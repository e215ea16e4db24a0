"""Every diagnostic code an inventory check can return, with one line of meaning.

docs/inventory.md lists the same codes for administrators, and each one is shown by a case under
tests/cases/invalid/.
"""

from __future__ import annotations

#: Every diagnostic code ``check`` can return, with one line of meaning.
CODES: dict[str, str] = {
    "E-FILE": "the inventory (or a file it names) cannot be read: missing, a directory, denied",
    "E-NAME-RESERVED": (
        "a router or server name starts with 'clients-', the prefix of client-class output"
        " files, or is 'all' or 'ungrouped', Ansible's implicit groups"
    ),
    "E-FILE-SIZE": "the file is larger than the 32 MiB limit",
    "E-FILE-BINARY": "the file contains a NUL byte; it is not text",
    "E-FILE-ENCODING": "the file is not valid UTF-8",
    "E-EMPTY": "the file holds no YAML document, the document is not a mapping, or none of its"
    " keys is an inventory's",
    "E-YAML-SYNTAX": "YAML syntax error (bad indentation, a tab, an unclosed quote or bracket...)",
    "E-YAML-DUPKEY": "a key appears twice in one mapping (YAML would keep only the last)",
    "E-YAML-KEY": "a mapping key is not a plain scalar",
    "E-YAML-MERGE": "YAML merge keys (<<) are not supported",
    "E-YAML-TAG": "an explicit YAML tag (!foo, !!python/...) is not supported",
    "E-YAML-SIZE": (
        "the document holds more than 500,000 values, or aliases expand it beyond that (alias bomb)"
    ),
    "E-YAML-DEPTH": "the document is nested too deeply",
    "E-YAML-NUMBER": "an unquoted number YAML 1.1 reads differently (010 is octal 8, 1:30 is 90)",
    "E-SCHEMA": "a value breaks the inventory schema (range, length, list size)",
    "E-SCHEMA-KEY": "an unknown key (often a typo; a hint names the closest known key)",
    "E-SCHEMA-REQUIRED": "a required key is missing",
    "E-SCHEMA-TYPE": "a value has the wrong type; the hint says how YAML read it and how to quote",
    "E-SCHEMA-VALUE": "a value is not one of the allowed words",
    "E-NAME": "a name is not safe as a host name or file name",
    "E-IFACE": "an interface name is not a Linux interface name",
    "E-GUID": "a GUID is not a 64-bit 0x-prefixed value, is zero, or a GUID range overflows",
    "E-NID": "a NID does not parse, or its address does not fit its LND",
    "E-NET": "an LNet network name does not parse",
    "E-NET-LND": "an LND current Lustre does not parse (elan, ptl, openib...) or cannot use here",
    "E-NET-RANGE": "an LNet net number outside 0-65535",
    "E-NET-COLLIDE": "a storage net number the solver will use is also a client net or another "
    "file system's first net",
    "E-DUP-NAME": "a host, switch, leaf, fabric, client group or file system name is used twice",
    "E-DUP-NID": "two hosts have the same NID",
    "E-DUP-IP": "two hosts have the same storage IP address",
    "E-DUP-GUID": "two ports or switches have the same GUID (guid_base ranges included)",
    "E-DUP-NET": "a client net is listed twice (o2ib and o2ib0 are the same net)",
    "E-DUP-OST": "an OST index is served by two servers of one file system",
    "E-SWITCH": "a switch is described inconsistently (tor with leaves, director without)",
    "E-LUSTRE-VERSION": "a Lustre release before 2.12, which lnetgen does not write for",
    "E-LUSTRE-UDSP": "udsp: true for clients older than Lustre 2.15, which have no UDSP",
    "E-TUNABLE": "LNet tunables the kernel would refuse or silently change (retry_count not "
    "below transaction_timeout, peer_credits above credits or outside o2iblnd's clamp, credits "
    "or peer_credits above 65,535 on a kfi NI), or router buffers for a role that does not "
    "forward",
    "E-TUNABLE-RELEASE": (
        "a tunable set for a role whose stated Lustre release predates it (ignored there)"
    ),
    "E-OPENSM": "a fabric's recorded OpenSM settings name a guid file lnetgen cannot write there",
    "E-ATTACH-SWITCH": "an attachment names a switch that is not defined",
    "E-ATTACH-FABRIC": "a host is attached to a fabric of the wrong role",
    "E-ATTACH-LEAF": "an attachment names a leaf module the switch does not have",
    "E-ATTACH-PORT": "an attachment names a port beyond the leaf's external ports",
    "E-PORT-TAKEN": "two hosts are attached to the same switch port",
    "E-ATTACH-NODE": (
        "a fat-tree or dragonfly attachment names a non-client, or a client is not attached"
    ),
    "E-TORUS-COORD": "a torus position is missing or outside the torus dimensions",
    "E-TORUS-FULL": "a torus position holds more nodes than nodes_per_chip, or clients do not fit",
    "E-TORUS-CSV": "the coordinates CSV is unreadable, malformed, or misses clients",
    "E-TORUS-SIZE": "a torus of more chips than lnetgen models (2,000,000)",
    "E-DFLY-PLACE": (
        "a dragonfly group or switch that does not exist, or a router without its dragonfly place"
    ),
    "E-DFLY-FULL": "a dragonfly switch holds more hosts than edge_ports",
    "E-IP": "an address with colons that is no IPv6 address",
    "E-NID-IPV6": "an IPv6 address on an LND whose NIDs Lustre parses as IPv4 only",
    "E-NID-IPV6-TARGET": "IPv6 NIDs on hosts whose stated release is before 2.16",
    "E-RAIL-LEAF": "a Multi-Rail port (rails) on another leaf module than the host's storage port",
    "E-RAIL-IFACE": "a Multi-Rail port (rails) reuses an interface the host already has",
    "E-RAIL-ADDR": "a Multi-Rail port's address is of the other IP family than the host's",
    "E-RATES": "a rate that does not parse",
    "E-RATES-TORUS": "torus link rates leave a direction without a rate",
    "E-PATH": "a file path leaves the inventory's directory",
    "E-LEAF-NO-ROUTER": (
        "a leaf module or TOR holds servers but no LNet router (solver: none on a client net "
        "whose clients the strategy routes to them through that leaf or N:M group)"
    ),
    "E-ROUTER-IFACE": "a router lacks an interface on the client side or the storage side",
    "E-CLIENT-NET": "a client group's net is not in client_nets, or a client net has no router",
    "E-NID-RULE": "client NIDs cannot be derived (rule does not fit the LND, list too short...)",
    "E-NODESET": "a node set does not parse or is too large",
    "E-FS-UNKNOWN": "a server names a file system not listed in filesystems",
    "E-OSTS": "OST indices on an MDS, or an OST range that does not parse",
    "E-MDTS": "MDT indices on an OSS, an MDT range that does not parse, or no MDS serves MDT 0",
    "E-DUP-MDT": "an MDT index is served by two MDS of one file system",
    "E-FS-NO-MDS": "a file system has servers but no MDS: it cannot start",
    "E-FS-MGS": "a file system's mgs is not a server, or sits on another storage fabric",
    "E-FS-FABRIC": "the servers of one file system are on storage fabrics that are not connected",
    "E-FAILOVER": "a failover partner is unknown, itself, or of another file system, role or leaf",
    "E-SYNTAX": "a value the schema let through does not parse (reported where it was found)",
    "W-LUSTRE-MIXED": (
        "some roles run Lustre 2.19.53 or later (routes only from /etc/lnet.conf), others an "
        "older release"
    ),
    "W-SLOT-CLIENTS": (
        "a router slot is on a torus chip that holds clients whose positions are fixed "
        "(a coordinates CSV or skip_routers: false)"
    ),
    "W-ROUTER-IDLE": (
        "a router's storage port is on a leaf module or TOR that holds no server: no "
        "fine-grained layout routes through it"
    ),
    "W-ROUTER-SPREAD": "routers are spread unevenly over the leaf modules that hold servers",
    "W-ROUTERS-PER-LEAF": "more than one router on one leaf module of a compute fabric",
    "W-NET-OVERLAP": "a client net or another file system's nets may fall in a storage net range",
    "W-NET-UNUSED": "a client net has neither clients nor routers",
    "W-FS-EMPTY": "a file system has no servers",
    "E-ACK-CODE": "an acknowledge entry names a code that is no warning lnetgen gives",
    "W-ACK-UNUSED": "an acknowledge entry matches no warning of the site (remove it)",
    "W-COORDS-UNUSED": "a router has torus coords but the client side is not a torus",
    "W-DFLY-UNUSED": "a router has a dragonfly place but the client side is not a dragonfly",
    "W-RATES-TORUS": "torus link rates on a site whose client side is not a torus (ignored)",
    "W-RATES-DRAGONFLY": "local or global link rates on a site that is not a dragonfly (ignored)",
    "W-RATES-SWITCH": "rates on a switch of a compute fabric (its links are fabric_link; ignored)",
    "W-OPENSM-UNMEASURED": (
        "a fabric records OpenSM settings without what fabric check measured (measured)"
    ),
    "W-NO-GUID": (
        "a host or client group on an InfiniBand fabric has no port GUID: the OpenSM guid files "
        "leave it out"
    ),
    "W-MODPROBE-TARGET": (
        "roles run Lustre 2.19.53 or later: their modprobe files carry networks= and tunables "
        "only, their routes come from the lnetctl YAML"
    ),
    "W-MODPROBE-SKIPPED": (
        "(dry solve, generate) the modprobe files cannot be written: an IPv6 gateway, or a "
        "routes= or networks= over Linux's 1,024-byte module parameter limit"
    ),
    "W-ANSIBLE-NO-MODPROBE": (
        "(dry solve, generate) with the modprobe files skipped, the Ansible output writes no "
        "modprobe options either"
    ),
    "E-ANSIBLE-NAMES": (
        "(dry solve, generate) a client class's Ansible group collides with another or a fixed "
        "group, or a host is in two roles"
    ),
    "E-MODPROBE-IPV6": (
        "(generate --formats modprobe) a gateway is IPv6, which the kernel's routes= cannot carry"
    ),
    "E-MODPROBE-LENGTH": (
        "(generate --formats modprobe) a routes= or networks= over Linux's 1,024-byte module "
        "parameter limit"
    ),
    "W-IO-SAME-PORT": (
        "IO nodes on one port position (port mod spines) of different leaves of a compute "
        "director, more than an even spread puts there: OpenSM ftree sends them one spine"
    ),
    "W-OPENSM-STALE": (
        "a recorded OpenSM measurement names no fabric digest, another fabric than the one "
        "described now, or (a storage fabric) another plan than the inventory's strategy"
    ),
}

#: Codes given on the default strategy's plan (``lnetgen validate``'s dry solve, ``generate``),
#: not by the inventory check: unit tests show them (tests/test_journey_emit.py) instead of a
#: case under tests/cases/invalid/; ``acknowledge:`` can name the warnings among them
#: (``lnetgen.inventory.acknowledge.PLAN_WARNINGS``).
SOLVED_CODES = frozenset(
    {
        "W-MODPROBE-SKIPPED",
        "W-ANSIBLE-NO-MODPROBE",
        "E-ANSIBLE-NAMES",
        "E-MODPROBE-IPV6",
        "E-MODPROBE-LENGTH",
    }
)
