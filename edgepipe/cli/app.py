"""The Typer application, error handling and exit codes.

Exit codes: 0 success; 1 the user's input or environment (bad model, config or
data; a missing optional toolchain, named with the ``pip install`` that fixes
it); 2 gate (a target failed or is not proven, or a baseline regression); 3 a
bug in edgepipe (please report it with the ``--debug`` output; a third-party
tool's failure is never exit 3: the build reports it and goes on); 130
interrupted. A user error prints one line naming the file and the fix, with no
traceback; ``--debug`` shows the traceback of any error. With ``--json`` an
error still prints one JSON document on stdout.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
import traceback

import typer
from typer.exceptions import Abort, Exit, TyperException

from edgepipe.cli import (
    baseline_cmd,
    bench_cmd,
    build_cmd,
    calibrate_cmd,
    check_cmd,
    eval_cmd,
    export_cmd,
    fleet_cmd,
    gate_cmd,
    init_cmd,
    schema_cmd,
    targets_cmd,
    toolchain_cmd,
)
from edgepipe.cli.options import EPILOG
from edgepipe.errors import EdgepipeError, ExitCode, UserError
from edgepipe.interrupts import raise_interrupted, redeliver_lost_signals

__all__ = ["EPILOG", "app", "entry_point", "main"]

#: The commands, in the order ``edgepipe --help`` lists them: build, export, evaluate, targets; CI (gate,
#: baselines, report schema); host benchmarks and calibration; operator support per target.
COMMANDS = (build_cmd, export_cmd, eval_cmd, targets_cmd, gate_cmd, baseline_cmd, schema_cmd, bench_cmd,
            calibrate_cmd, check_cmd, init_cmd, toolchain_cmd, fleet_cmd)

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
    for module in COMMANDS:
        module.register(app)


def _error(message: str) -> None:
    typer.echo(f"edgepipe: error: {message}", err=True)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code instead of raising.

    SIGTERM (a cancelled CI job) is handled like Ctrl-C: staged outputs are removed, exit 130.
    """
    main_thread = threading.current_thread() is threading.main_thread()
    redeliver_lost_signals()
    previous = signal.signal(signal.SIGTERM, raise_interrupted) if main_thread else None
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _json_error(argv: list[str], code: int, kind: str, exc: BaseException | None, message: str) -> None:
    """With ``--json``, an error is a JSON document on stdout too (CI parses stdout whatever the exit code)."""
    if "--json" not in argv:
        return
    error = {"kind": kind, "type": type(exc).__name__ if exc is not None else None, "message": message,
             "fix": getattr(exc, "fix", None)}
    typer.echo(json.dumps({"verdict": "error", "exit_code": code, "error": error}, indent=2, ensure_ascii=False))


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
        _json_error(argv, int(exc.exit_code), "user error", exc, exc.one_line())
        return int(exc.exit_code)
    except EdgepipeError as exc:
        if debug:
            traceback.print_exc()
        if exc.exit_code != ExitCode.GATE_FAILED:
            _error(f"{exc} (run with --debug for details)" if not debug else str(exc))
            _json_error(argv, int(exc.exit_code), "internal error", exc, str(exc))
        return int(exc.exit_code)
    except Exit as exc:
        return int(exc.exit_code)
    except Abort as exc:
        _error("interrupted; no outputs were written")
        _json_error(argv, int(ExitCode.INTERRUPTED), "interrupted", exc, "interrupted; no outputs were written")
        return int(ExitCode.INTERRUPTED)
    except TyperException as exc:
        _error(f"{exc.format_message()} (see `edgepipe --help`)")
        _json_error(argv, int(ExitCode.USER_ERROR), "user error", exc, exc.format_message())
        return int(ExitCode.USER_ERROR)
    except KeyboardInterrupt as exc:
        _error("interrupted; no outputs were written")
        _json_error(argv, int(ExitCode.INTERRUPTED), "interrupted", exc, "interrupted; no outputs were written")
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 - a bug: keep its traceback, exit 3
        traceback.print_exc()
        _error("internal error: this is a bug in edgepipe; please report it with the traceback above")
        _json_error(argv, int(ExitCode.INTERNAL_ERROR), "internal error", exc,
                    f"{type(exc).__name__}: {exc} (a bug in edgepipe; the traceback is on stderr)")
        return int(ExitCode.INTERNAL_ERROR)
    if isinstance(code, int) and code == ExitCode.INTERRUPTED:
        _error("interrupted; no outputs were written")
        _json_error(argv, int(ExitCode.INTERRUPTED), "interrupted", None, "interrupted; no outputs were written")
    return code if isinstance(code, int) else int(ExitCode.OK)


def entry_point() -> None:
    """Console-script entry: ``edgepipe``."""
    sys.exit(main())
