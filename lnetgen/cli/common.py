"""Helpers shared by the command modules: diagnostics printing and exit codes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any, TypeVar

import click

from lnetgen.diagnostics import Diagnostic, InputError, UsageError, errors

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2


def print_diags(diags: Iterable[Diagnostic], err: bool = True) -> None:
    for d in diags:
        click.echo(d.format(), err=err)


def handles_input_errors(code: int = EXIT_FINDINGS, writes: bool = True) -> Callable[[F], F]:
    """Turn an ``InputError`` into its diagnostics on stderr and exit ``code`` (a
    ``UsageError`` -- refused output, bad option value -- always exits 2).  ``writes`` says
    whether the command writes output (then the summary says nothing was written)."""

    def deco(fn: F) -> F:
        @wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except InputError as exc:
                print_diags(exc.diagnostics)
                n = len(errors(exc.diagnostics))
                tail = "; nothing written" if writes else ""
                click.echo(f"lnetgen: {n} error(s){tail}", err=True)
                sys.exit(EXIT_INPUT if isinstance(exc, UsageError) else code)

        return inner  # type: ignore[return-value]

    return deco


STRATEGY_OPT = click.option(
    "--strategy",
    "-s",
    default=None,
    metavar="NAME",
    help="layout (see `lnetgen strategies`); default: the inventory's strategy.default",
)


def model_options(fn: F) -> F:
    """The congestion model's options, shared by analyze, compare, place and report."""
    fn = click.option(
        "--link-mb-s",
        type=click.FloatRange(min=0, min_open=True),
        default=3020.0,
        show_default=True,
        help="one-way bandwidth of a torus link (MB/s; SeaStar2+, seed 000)",
    )(fn)
    fn = click.option(
        "--ost-mb-s",
        type=click.FloatRange(min=0, min_open=True),
        default=180.0,
        show_default=True,
        help="streaming rate of one OST = one flow (MB/s; seed 000)",
    )(fn)
    fn = click.option(
        "--weight-by",
        type=click.Choice(["osts", "servers"]),
        default="osts",
        show_default=True,
        help="uniform load: a server offers one flow per OST (MDS none), or one per server",
    )(fn)
    return fn
