"""The types of lnetgen's string and path options: refused when empty or blank, and a file
name written into a command line to paste refused when it holds a control character or a
bidi override.  ``lnetgen.cli.common`` re-exports them."""

from __future__ import annotations

from typing import Any

import click

from lnetgen.diagnostics import show


def _empty(value: str, param: click.Parameter | None) -> str:
    """The refusal of an empty ``value`` of ``param``."""
    if isinstance(param, click.Option) and not param.required:
        return f"{value!r} is empty (leave the option out for its default)"
    return f"{value!r} is empty"


def not_empty(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A list option given an empty value (``--formats ''``, ``--from ''``, ``--strategies
    ,``) is refused: it used to run as if the option had been left out, the opposite of what
    an empty list asks for."""
    del ctx
    if value is not None and not value.strip(" ,"):
        raise click.BadParameter(_empty(value, param))
    return value


class NonEmptyText(click.types.StringParamType):
    """A string option or argument, refused when empty or blank: ``fabric import --name ''``
    named the fabric nothing and ``--path ''`` wrote ``lfs setstripe`` lines without a file,
    as if the value had not been given.  Every string option of lnetgen has this type."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        out = super().convert(value, param, ctx)
        if not out.strip():
            self.fail(_empty(out, param), param, ctx)
        return out


class NonEmptyPath(click.Path):
    """A path option or argument, refused when empty or blank: ``solve --out ''`` wrote no
    plan, ``generate -o ''`` and ``report -o ''`` went for the current directory, and
    ``compare --since ''`` was refused as a missing file without naming the option.  Every
    path option of lnetgen has this type."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail(_empty(value, param), param, ctx)
        return super().convert(value, param, ctx)


#: A string option's type: ``NonEmptyText``.
TEXT = NonEmptyText()


class FileNameText(NonEmptyText):
    """A file name lnetgen writes into a command line for the administrator to paste
    (``--path`` of ``place osts`` and ``advise stripes``), refused when it holds a character
    a terminal would act on or hide: a control character (BEL, backspace, ESC of a colour or
    clear-screen sequence, tab, newline) or a bidi override (U+202E shows ``evil\u202eFILE``
    as ``evilELIF``).  Quoting makes such a name safe for a shell, but not for the terminal
    it is printed on nor for the eye of who reads the line before running it; a file whose
    name needs one is better created by a script than by a pasted ``lfs`` line.  The refusal
    shows the value escaped."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        out = super().convert(value, param, ctx)
        if not out.isprintable():
            bad = next(c for c in out if not c.isprintable())
            self.fail(
                f"{show(out)} holds {bad!r}, a control character or bidi override: lnetgen "
                "does not print it in a command line to paste",
                param,
                ctx,
            )
        return out


#: A file name option's type: ``FileNameText``.
FILE_NAME = FileNameText()
