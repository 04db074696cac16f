"""The Typer application, error handling and exit codes.

Exit codes: 0 success; 1 user error (bad input or config); 2 accuracy gate
failed; 3 internal error (a bug: please report it with the ``--debug`` output);
130 interrupted. A user error prints one line naming the file and the fix,
with no traceback; ``--debug`` shows the traceback of any error.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import traceback

import typer
from typer.exceptions import Abort, Exit, TyperException

from edgepipe.errors import EdgepipeError, ExitCode, UserError

EPILOG = ("Exit codes: 0 success · 1 user error (bad input or config) · "
          "2 accuracy gate failed or baseline regression · 3 internal error · 130 interrupted.")

app = typer.Typer(
    name="edgepipe",
    help="Take a trained network to edge NPUs and prove, in CI, that it still works there.",
    epilog=EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks and debug logs."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log each stage to stderr."),
) -> None:
    level = logging.DEBUG if debug else logging.INFO if verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("edgepipe").setLevel(level)
    if not debug:
        for handler in logging.getLogger().handlers:
            handler.addFilter(_drop_library_advice)


def _drop_library_advice(record: logging.LogRecord) -> bool:
    """Hide ONNX Runtime quantizer warnings edgepipe already acts on (it pre-processes every model;
    calibration re-quantizes intermediate graphs): they are noise to the user. ``--debug`` shows them."""
    return not (record.levelno < logging.ERROR and "onnxruntime/quantization" in record.pathname.replace("\\", "/"))


def _register() -> None:
    from edgepipe.cli import build_cmd, eval_cmd, export_cmd, targets_cmd

    for module in (build_cmd, export_cmd, eval_cmd, targets_cmd):
        module.register(app)
    from edgepipe.cli import baseline_cmd, gate_cmd, schema_cmd  # CI: regression gate, baselines, report schema

    for module in (gate_cmd, baseline_cmd, schema_cmd):
        module.register(app)
    from edgepipe.cli import bench_cmd, calibrate_cmd  # host benchmarks, delegate estimates, calibration

    for module in (bench_cmd, calibrate_cmd):
        module.register(app)
    from edgepipe.cli import check_cmd  # operator support per target

    check_cmd.register(app)
    from edgepipe.cli import fleet_cmd  # many models × many targets on a process pool or Ray

    fleet_cmd.register(app)


def _error(message: str) -> None:
    typer.echo(f"edgepipe: error: {message}", err=True)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code instead of raising.

    SIGTERM (a cancelled CI job) is handled like Ctrl-C: staged outputs are removed, exit 130.
    """
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt) if main_thread else None
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    _register()
    try:
        code = app(args=argv, prog_name="edgepipe", standalone_mode=False)
    except UserError as exc:
        if debug:
            traceback.print_exc()
        _error(exc.one_line())
        return int(exc.exit_code)
    except EdgepipeError as exc:
        if debug:
            traceback.print_exc()
        if exc.exit_code != ExitCode.GATE_FAILED:
            _error(f"{exc} (run with --debug for details)" if not debug else str(exc))
        return int(exc.exit_code)
    except Exit as exc:
        return int(exc.exit_code)
    except Abort:
        _error("interrupted; no outputs were written")
        return int(ExitCode.INTERRUPTED)
    except TyperException as exc:
        _error(f"{exc.format_message()} (see `edgepipe --help`)")
        return int(ExitCode.USER_ERROR)
    except KeyboardInterrupt:
        _error("interrupted; no outputs were written")
        return int(ExitCode.INTERRUPTED)
    except Exception:  # noqa: BLE001 - a bug: keep its traceback, exit 3
        traceback.print_exc()
        _error("internal error: this is a bug in edgepipe; please report it with the traceback above")
        return int(ExitCode.INTERNAL_ERROR)
    if isinstance(code, int) and code == ExitCode.INTERRUPTED:
        _error("interrupted; no outputs were written")
    return code if isinstance(code, int) else int(ExitCode.OK)


def entry_point() -> None:
    """Console-script entry: ``edgepipe``."""
    sys.exit(main())
