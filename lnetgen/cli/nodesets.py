"""Options that take node sets (ClusterShell syntax, ``rtr[01-02]``), each bounded before it
is expanded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


#: The most names one node-set option may expand to (a typo like ``n[1-999999999]`` is refused
#: before ClusterShell builds it).
MAX_NODESET = 1_000_000


def bounded_nodeset(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A callback for an option holding one node set (``--hosts``): it names at most
    ``MAX_NODESET`` nodes, counted before ClusterShell expands it (``rtr[1-999999999]`` was a
    MemoryError); the command expands it, and reports a bad node set naming the option."""
    del ctx, param
    from lnetgen import nodes

    if value is not None and nodes.count(value) > MAX_NODESET:
        raise click.BadParameter(f"names more than {MAX_NODESET:,} hosts")
    return value


def _nodesets(ctx: click.Context, param: click.Parameter, value: Any) -> tuple[str, ...]:
    """A repeatable option whose values are ClusterShell node sets (``rtr[01-02]``,
    ``oss01,oss02``): the names, in the order given, each once."""
    del ctx, param
    from lnetgen import nodes

    out: dict[str, None] = {}
    for text in value or ():
        if nodes.count(text) > MAX_NODESET:
            raise click.BadParameter(f"{text!r} names more than {MAX_NODESET:,} nodes")
        try:
            names = nodes.expand(text)
        except nodes.NodeSyntaxError as exc:
            raise click.BadParameter(f"{text!r} is not a node set: {exc}") from None
        picked = [n for n in names if n.strip()]
        if not picked:  # --fail '' ran as if no --fail had been given
            raise click.BadParameter(f"{text!r} names no node")
        out.update(dict.fromkeys(picked))
    return tuple(out)


def nodeset_option(*decls: str, **kwargs: Any) -> Callable[[F], F]:
    """A repeatable option taking names or node sets (``--oss 'oss[01-02]'``)."""
    return click.option(*decls, multiple=True, callback=_nodesets, **kwargs)
