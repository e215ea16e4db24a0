"""The ``routes=`` and ``networks=`` module-parameter strings of the ``lnet`` kernel module:
parsed exactly as the kernel does (``lnet/lnet/config.c``), and produced as short as it accepts.
"""

from lnetgen.routestr.fold import fold_gateways, fold_nets, fold_numbers
from lnetgen.routestr.formatting import format_routes, statement_order
from lnetgen.routestr.kernel import (
    MODULE_PARAM_MAX,
    NETWORKS_MAX,
    TEXTBUF_BUDGET,
    TEXTBUF_HEADER,
    TEXTBUF_SINGLE_MAX,
    NetworksSyntaxError,
    RouteBudgetError,
    RouteSyntaxError,
    param_fits,
)
from lnetgen.routestr.kroute import KRoute
from lnetgen.routestr.networks import format_networks, parse_networks
from lnetgen.routestr.parse import (
    effective_routes,
    parse_routes,
    parse_routes_ordered,
    route_conflicts,
)
from lnetgen.routestr.ranges import expand_brackets

__all__ = [
    "MODULE_PARAM_MAX",
    "NETWORKS_MAX",
    "TEXTBUF_BUDGET",
    "TEXTBUF_HEADER",
    "TEXTBUF_SINGLE_MAX",
    "KRoute",
    "NetworksSyntaxError",
    "RouteBudgetError",
    "RouteSyntaxError",
    "effective_routes",
    "expand_brackets",
    "fold_gateways",
    "fold_nets",
    "fold_numbers",
    "format_networks",
    "format_routes",
    "param_fits",
    "parse_networks",
    "parse_routes",
    "parse_routes_ordered",
    "route_conflicts",
    "statement_order",
]
