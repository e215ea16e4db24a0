"""Helpers shared by the command modules: the exit-code contract (``handles_input_errors`` and
the ``Lnetgen`` group that reports click's own usage errors in lnetgen's form), diagnostics
printing, and the options several commands share (``SITE``, ``--strategy``, ``--plan``,
``--force``, ``--seed``, the model's settings).

Exit codes: 0 ok; 1 findings, including an invalid inventory; 2 usage or input error (a bad
option value, a missing or unreadable SITE, a bad or stale ``--plan``, a refused output, stdout
that cannot be written); 141 after a closed pipe (``lnetgen.cli.streams``).
"""

from __future__ import annotations

import itertools
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import wraps
from typing import TYPE_CHECKING, Any, TypeVar

import click

from lnetgen.cli import streams
from lnetgen.cli.texttypes import FILE_NAME as FILE_NAME  # the option types, re-exported
from lnetgen.cli.texttypes import TEXT as TEXT
from lnetgen.cli.texttypes import FileNameText as FileNameText
from lnetgen.cli.texttypes import NonEmptyPath as NonEmptyPath
from lnetgen.cli.texttypes import NonEmptyText as NonEmptyText
from lnetgen.cli.texttypes import not_empty as not_empty
from lnetgen.diagnostics import Diagnostic, InputError, UsageError, errors, is_usage, to_json, usage
from lnetgen.progress import NO_PROGRESS, Progress, Tick

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2

if TYPE_CHECKING:
    from lnetgen.model import Site
    from lnetgen.throughput import WorkloadSpec
    from lnetgen.throughput.fabric import FabricRoutes
    from lnetgen.write import WriteResult


def print_diags(diags: Iterable[Diagnostic], err: bool = True) -> None:
    for d in diags:
        click.echo(d.format(), err=err)


def handles_input_errors(code: int = EXIT_FINDINGS, writes: bool = False) -> Callable[[F], F]:
    """Turn an ``InputError`` into its diagnostics on stderr and exit ``code`` (1: an invalid
    inventory is a finding).  A ``UsageError`` (refused output, bad option value, bad plan) or
    an error whose diagnostics are all ``E-USAGE`` exits 2.  With ``--format json`` the
    diagnostics are also printed on stdout as JSON.  ``writes`` says whether the command
    writes output (then the summary says nothing was written)."""

    def deco(fn: F) -> F:
        @wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except InputError as exc:
                fail(exc, kwargs.get("fmt") == "json", code, writes)

        return inner  # type: ignore[return-value]

    return deco


def fail(exc: InputError, as_json: bool, code: int = EXIT_FINDINGS, writes: bool = False) -> None:
    """Print ``exc`` (and its JSON on stdout when ``as_json``) and exit."""
    if as_json:
        click.echo(to_json(exc.diagnostics))
    print_diags(exc.diagnostics)
    n = len(errors(exc.diagnostics))
    tail = "; nothing written" if writes else ""
    click.echo(f"lnetgen: {n} error(s){tail}", err=True)
    bad_input = isinstance(exc, UsageError) or is_usage(exc.diagnostics)
    sys.exit(EXIT_INPUT if bad_input else code)


def as_input_error(exc: InputError) -> UsageError:
    """``exc`` as an input error (exit 2): for inputs other than the inventory."""
    return exc if isinstance(exc, UsageError) else UsageError(exc.diagnostics)


def about_option(option: str, exc: InputError) -> UsageError:
    """``exc``, raised about a value the user gave ``option``, as a usage error naming it:
    ``--job: 'bad[': missing bracket`` rather than the bare message (exit 2)."""
    from dataclasses import replace

    return UsageError(
        [replace(d, path=option) if not d.file and d.path == "$" else d for d in exc.diagnostics]
    )


# ---------------------------------------------------------------- click's own usage errors


def _wants_json(argv: Sequence[str]) -> bool:
    return "--format=json" in argv or any(
        a == "--format" and b == "json" for a, b in itertools.pairwise(argv)
    )


def _click_diag(exc: click.ClickException) -> Diagnostic:
    """A click error as ``lnetgen: error[E-USAGE] --option: message``."""
    if isinstance(exc, click.BadParameter) and not isinstance(exc, click.MissingParameter):
        param = exc.param
        if isinstance(param, click.Option):
            where = max(param.opts, key=len)
        elif param is not None:
            where = param.human_readable_name
        else:
            where = str(exc.param_hint or "$")
        return usage(where, exc.message)
    if isinstance(exc, click.NoSuchOption):
        return usage(exc.option_name, "no such option" + _possibilities(exc))
    return usage("$", exc.format_message())


def _possibilities(exc: click.NoSuchOption) -> str:
    if not exc.possibilities:
        return ""
    return f" (did you mean {', '.join(sorted(exc.possibilities))}?)"


class DiagnosticsError(click.ClickException):
    """A usage or input error found while click parses the command line, with lnetgen's
    diagnostics (exit 2, also when a command is invoked without the ``lnetgen`` group)."""

    exit_code = EXIT_INPUT

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(d.format() for d in diagnostics))
        self.diagnostics = diagnostics

    def show(self, file: Any = None) -> None:
        del file
        print_diags(self.diagnostics)


class Terminated(SystemExit):
    """A SIGTERM or SIGHUP: the run unwinds (``finally`` blocks, removal of temporaries) and
    exits 128 + the signal's number, as a killed process does (143, 129)."""


def _exit_cleanly_on_stop() -> None:
    """``kill`` (SIGTERM) and a hang-up (SIGHUP: the ssh session running ``generate`` drops)
    unwind like Ctrl-C: a run writing an output tree removes its temporary tree and its lock
    file on the way out (they were left behind, a 551 MB temporary for Spider) and exits 143 or
    129 as a killed process does.  A signal the caller set to be ignored stays ignored:
    ``nohup lnetgen generate ...`` keeps running when the session drops."""
    import signal
    import threading

    def terminated(signum: int, _frame: object) -> None:
        raise Terminated(128 + signum)

    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, terminated)


def tell_notes(exc: BaseException | None) -> None:
    """Print the notes of an interruption (``KeyboardInterrupt``, ``Terminated``) on stderr,
    one ``lnetgen: ...`` line each: what the interrupted run leaves, such as which tree an
    output directory holds (``lnetgen.write``)."""
    from lnetgen.diagnostics import printable

    for note in getattr(exc, "__notes__", None) or ():
        click.echo(f"lnetgen: {printable(str(note))}", err=True)


@contextmanager
def noted_interruption(note: Callable[[], str]) -> Iterator[None]:
    """A block whose interruption (Ctrl-C, SIGTERM, SIGHUP) leaves with the note ``note()`` unless
    it has one already (``tell_notes``): ``generate`` says whether it stopped before or after
    it wrote --out."""
    try:
        yield
    except (KeyboardInterrupt, Terminated) as exc:
        if not getattr(exc, "__notes__", None):
            exc.add_note(note())
        raise


class Lnetgen(click.Group):
    """The ``lnetgen`` group: click's usage errors (unknown option, bad value, missing argument)
    are printed as ``lnetgen: error[E-USAGE] --option: message`` -- or as JSON diagnostics on
    stdout when the command line asks for ``--format json`` -- and exit 2.  On the real
    command line a failed write to stdout or stderr ends every command the same way
    (``lnetgen.cli.streams``: one line and exit 2, or exit 141 silently after a closed pipe)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if args is None:  # the real command line, not a test's runner
            _exit_cleanly_on_stop()
            streams.guard_streams()
        try:
            try:
                return self._main(argv, prog_name, complete_var, standalone_mode, **extra)
            finally:  # also on sys.exit: what is still buffered is written now
                if args is None:
                    streams.flush_streams()
        except streams.OutputError as exc:  # stdout full, a closed pipe: lnetgen.cli.streams
            streams.output_failed(exc)

    def _main(
        self,
        argv: list[str],
        prog_name: str | None,
        complete_var: str | None,
        standalone_mode: bool,
        **extra: Any,
    ) -> Any:
        try:
            rv = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:
            diags = exc.diagnostics if isinstance(exc, DiagnosticsError) else [_click_diag(exc)]
            if _wants_json(argv):
                click.echo(to_json(diags))
            print_diags(diags)
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                click.echo(f"Try '{ctx.command_path} --help' for help.", err=True)
            sys.exit(EXIT_INPUT)
        except click.Abort as exc:  # Ctrl-C: the shell's code for a run stopped by SIGINT
            click.echo("Aborted!", err=True)
            tell_notes(exc.__cause__)
            sys.exit(128 + 2)
        except Terminated as exc:
            tell_notes(exc)
            raise
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else EXIT_OK)


# ---------------------------------------------------------------- shared options


def site_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """SITE (and ``compare --since``) must be a readable regular file: missing, a directory,
    a named pipe, socket or device, or unreadable is an input error (``E-FILE``, exit 2),
    where an inventory that reads but is wrong exits 1."""
    del ctx, param
    if value is None:
        return None
    problem = ""
    try:
        st = os.stat(value)
    except FileNotFoundError:
        problem = "no such file" if not os.path.lexists(value) else "a link to no file"
    except OSError as exc:
        problem = f"cannot be read ({exc.strerror or exc})"
    else:
        if stat.S_ISDIR(st.st_mode):
            problem = "is a directory, expected an inventory file"
        elif not stat.S_ISREG(st.st_mode):
            problem = "is a named pipe, socket or device, expected an inventory file"
        elif not os.access(value, os.R_OK):
            problem = "cannot be read (permission denied)"
    if problem:
        raise DiagnosticsError([Diagnostic(value, 0, 0, "error", "E-FILE", "$", problem)])
    return value


def site_argument(fn: F) -> F:
    """``SITE``: the inventory file (checked to be a readable file before anything runs, by
    ``site_file``: the type does not check readability, else click's own check would refuse
    an unreadable SITE as a usage error, E-USAGE, before ``site_file`` says E-FILE)."""
    return click.argument("site", type=NonEmptyPath(readable=False), callback=site_file)(fn)


def _strategy(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    del ctx, param
    if value is None:
        return None
    from lnetgen.solve import strategy_names

    known = strategy_names()
    if value not in known:
        raise click.BadParameter(f"unknown strategy {value!r} (known: {', '.join(known)})")
    return value


def _complete_strategy(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of ``--strategy``: the registered layouts."""
    del ctx, param
    from lnetgen.solve import strategy_names

    return [n for n in strategy_names() if n.startswith(incomplete)]


STRATEGY_OPT = click.option(
    "--strategy",
    "-s",
    type=TEXT,
    default=None,
    metavar="NAME",
    callback=_strategy,
    shell_complete=_complete_strategy,
    help="layout (see `lnetgen strategies`); default: the inventory's strategy.default",
)


def saved_warnings(out: str, result: WriteResult) -> list[str]:
    """The warnings for files of ``out`` that were kept rather than deleted: those that came
    while this run replaced it (``saved``), and those a killed run left in its swapped-out
    tree (``recovered``).  They were moved aside, never deleted."""
    from lnetgen.diagnostics import printable

    head = f"lnetgen: warning: {out}: "
    lines = [f"{head}files put there while it was replaced were kept in {result.saved}"]
    lines = lines if result.saved else []
    lines += [
        f"{head}a run killed while it replaced it left files lnetgen did not write (or that "
        f"were changed since) in its old tree; they were kept in {where}"
        for where in result.recovered
    ]
    return [printable(line) for line in lines]


def plan_option(fn: F) -> F:
    """``--plan plan.json`` (from ``lnetgen solve --out``): use this reviewed plan instead of
    solving SITE.  Refused when SITE changed since (unless ``--force``)."""
    return click.option(
        "--plan",
        "plan_path",
        type=NonEmptyPath(exists=True, dir_okay=False),
        default=None,
        metavar="PLAN",
        help="use this plan.json (from `lnetgen solve --out`) instead of solving SITE; "
        "refused when SITE changed since, unless --force",
    )(fn)


def force_option(help_text: str) -> Callable[[F], F]:
    """``--force``, with the command's own meaning."""
    return click.option("--force", is_flag=True, help=help_text)


def seed_option(help_text: str) -> Callable[[F], F]:
    """``--seed N``: a random generator's seed, 0 to 2**32-1."""
    return click.option(
        "--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True, help=help_text
    )


class Number(click.FloatRange):
    """A float in a range, ``nan`` refused: NaN compares unequal to everything and escapes
    click's range check (``collect --timeout nan`` turned the timeout off)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        out = super().convert(value, param, ctx)
        if out != out:  # NaN compares unequal to itself
            self.fail(f"{value!r} is not a number", param, ctx)
        return out


class Rate(Number):
    """A positive, finite rate in MB/s: ``nan``, ``inf``, ``1e309`` (which Python reads as
    inf) and ``1e-320`` (a denormal whose reciprocal overflows) passed ``x>0`` and put NaN and
    Infinity, which are not JSON, into ``--format json``."""

    name = "rate"

    def __init__(self) -> None:
        from lnetgen.rates import MAX_MB_S, MIN_MB_S  # the inventory's rates take the same

        super().__init__(min=MIN_MB_S, max=MAX_MB_S)


def model_options(fn: F) -> F:
    """The congestion model's options, shared by analyze, compare, place and report."""
    fn = click.option(
        "--link-mb-s",
        type=Rate(),
        default=None,
        help="one-way bandwidth of a torus link (MB/s) for the flow counts; default: the "
        "site's slowest torus direction (rates.torus_link), n/a when it gives none",
    )(fn)
    fn = click.option(
        "--ost-mb-s",
        type=Rate(),
        default=None,
        help="streaming rate of one OST = one flow (MB/s); default: the site's rates.ost, "
        "n/a when it gives none",
    )(fn)
    fn = click.option(
        "--weight-by",
        type=click.Choice(["osts", "servers"]),
        default="osts",
        show_default=True,
        help="uniform load: a server offers one flow per OST (MDS none), or one per server",
    )(fn)
    return fn


def workload_option(fn: F) -> F:
    """``--workload``: the IOR workload whose bandwidth is predicted (lnetgen.throughput)."""
    return click.option(
        "--workload",
        "workload",
        type=TEXT,
        metavar="FILE|K=V,...",
        default=None,
        help="the workload to predict GB/s for: a YAML file or inline keys, e.g. "
        "'pattern=shared-file,files=10,nodes=random' (docs/throughput.md), or 'none' to "
        "predict nothing (faster); default: one single-stripe file per OST on random nodes",
    )(fn)


def workload_spec(arg: str | None) -> WorkloadSpec | None:
    """The ``--workload`` value as a spec; None for ``none`` (no prediction); ``InputError``
    for a bad one."""
    from lnetgen.throughput import DEFAULT, load_workload

    if arg == "none":
        return None
    try:
        return DEFAULT if arg is None else load_workload(arg)
    except InputError as exc:
        raise as_input_error(exc) from None


def opensm_option(fn: F) -> F:
    """``--opensm recorded|none``: route the InfiniBand fabrics by OpenSM's simulated tables."""
    return click.option(
        "--opensm",
        type=click.Choice(["recorded", "none"]),
        default=None,
        help="route the InfiniBand fabrics as OpenSM does: simulate them (ibsim) with the "
        "inventory's recorded OpenSM settings or none, and share their links among the ranks "
        "-- a fat-tree compute fabric's, and the storage fabric's spine links in place of "
        "pooled uplinks (needs opensm and ibsim)",
    )(fn)


def opensm_routes(
    site: Site, settings: str | None, spec: WorkloadSpec | None
) -> tuple[FabricRoutes | None, FabricRoutes | None]:
    """The compute fabric's and the storage fabric's simulated routes for ``--opensm`` (None
    where the site has no such fabric, without the option, or when nothing is predicted:
    ``spec`` None, ``--workload none``); exit 2 when OpenSM cannot run."""
    from lnetgen.fabric.simulate import SimError
    from lnetgen.throughput.fabric import simulated_routes, storage_routes

    if settings is None or spec is None:
        return None, None
    try:
        compute = simulated_routes(site, settings) if site.client_fabric else None
        return compute, storage_routes(site, settings)
    except SimError as exc:
        raise UsageError([usage("--opensm", str(exc))]) from None


def quiet_option(fn: F) -> F:
    """``--quiet``: no progress bar (there is none either when stderr is not a terminal)."""
    return click.option(
        "--quiet",
        "-q",
        "quiet",
        is_flag=True,
        help="no progress bar on stderr (none is drawn when stderr is not a terminal)",
    )(fn)


def progress_bars(quiet: bool) -> Progress:
    """A ``Progress`` drawing tqdm bars on stderr for stages that last over 2 s; nothing with
    ``quiet`` or when stderr is not a terminal (logs and pipes stay clean)."""
    if quiet or not sys.stderr.isatty():
        return NO_PROGRESS
    from tqdm import tqdm

    def start(what: str, total: int) -> Tick:
        """A bar of ``total`` steps; a counter when ``total`` is 0 (not known ahead)."""
        bar = tqdm(total=total or None, desc=what, leave=False, file=sys.stderr, delay=2.0, unit="")

        def tick() -> None:
            bar.update(1)
            if total and bar.n >= total:
                bar.close()

        return tick

    return start


def keep_nets_option(fn: F) -> F:
    """``--keep-nets PLAN``: keep the storage net numbers of the plan deployed now."""
    return click.option(
        "--keep-nets",
        "keep_path",
        metavar="PLAN",
        type=NonEmptyPath(dir_okay=False),
        default=None,
        help="plan.json deployed now: nets whose group (OSS, leaf, N:M group) is still there "
        "keep their numbers, new ones take free numbers (a grown site renumbers nothing)",
    )(fn)
