"""The ``lnetgen`` command: parses options, calls the library, prints, sets exit codes.

Exit codes (like diff(1)): 0 ok; 1 findings (invalid inventory, drift, failed checks);
2 usage or input error.  This is the only module that imports click or prints.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any, TypeVar

import click

from lnetgen import __version__
from lnetgen.diagnostics import Diagnostic, InputError, errors, to_json

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2


def _print_diags(diags: Iterable[Diagnostic], err: bool = True) -> None:
    for d in diags:
        click.echo(d.format(), err=err)


def handles_input_errors(code: int = EXIT_FINDINGS) -> Callable[[F], F]:
    """Turn an ``InputError`` into its diagnostics on stderr and exit ``code``."""

    def deco(fn: F) -> F:
        @wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except InputError as exc:
                _print_diags(exc.diagnostics)
                n = len(errors(exc.diagnostics))
                click.echo(f"lnetgen: {n} error(s); nothing written", err=True)
                sys.exit(code)

        return inner  # type: ignore[return-value]

    return deco


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="lnetgen")
def main() -> None:
    """Plan, generate, diff and analyze Lustre LNet fine-grained routing.

    Exit status: 0 ok, 1 findings (invalid inventory, drift), 2 usage or input error.
    """


@main.command()
@click.argument("site", type=click.Path(dir_okay=True, allow_dash=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def validate(site: str, fmt: str) -> None:
    """Check an inventory: schema, then meaning.  Exit 0 valid, 1 errors, 2 usage."""
    from lnetgen.inventory import check

    _site, diags = check(site)
    if fmt == "json":
        click.echo(to_json(diags))
    else:
        _print_diags(diags, err=False)
        nerr = len(errors(diags))
        nwarn = len(diags) - nerr
        click.echo(f"{site}: {'valid' if not nerr else 'invalid'} "
                   f"({nerr} error(s), {nwarn} warning(s))")
    sys.exit(EXIT_FINDINGS if errors(diags) else EXIT_OK)


@main.command()
@click.option("--plan", "which", flag_value="plan", help="print the plan schema instead")
def schema(which: str | None) -> None:
    """Print the inventory JSON Schema (for editors)."""
    from lnetgen.resources import schema_text

    click.echo(schema_text("plan.schema.json" if which == "plan" else "site.schema.json"),
               nl=False)
