"""What a TFLite file needs to run: its custom ops, and whether LiteRT's built-in resolver can run it."""

from __future__ import annotations

from pathlib import Path


def custom_op_names(path: Path) -> list[str]:
    """Names of the custom ops ``path`` uses (sorted), read from the flatbuffer without running it."""
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model(str(path))
    custom = schema.BuiltinOperator.CUSTOM
    names = {code.customCode.decode(errors="replace") if isinstance(code.customCode, bytes) else str(code.customCode)
             for code in model.operatorCodes
             if max(code.builtinCode, code.deprecatedBuiltinCode) == custom}
    return sorted(names)


#: TFLite ops that keep state between invocations in resource variables (a streaming model's buffers).
STATE_OPS = ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE")


def state_op_names(path: Path) -> list[str]:
    """Which of :data:`STATE_OPS` ``path`` uses (in that order), read from the flatbuffer without running it."""
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model(str(path))
    used = {max(code.builtinCode, code.deprecatedBuiltinCode) for code in model.operatorCodes}
    return [name for name in STATE_OPS if getattr(schema.BuiltinOperator, name) in used]


def runnable_in_litert(path: Path) -> str | None:
    """``None`` when LiteRT can allocate ``path``; otherwise why not (its first line). A file that crashes LiteRT
    (:func:`~edgepipe.runtimes.crash_probe.litert_crash`) is never opened in this process."""
    from edgepipe.runtimes import open_runner
    from edgepipe.runtimes.crash_probe import litert_crash

    crash = litert_crash(path)
    if crash is not None:
        return crash

    try:
        with open_runner(path):
            return None
    except Exception as exc:  # noqa: BLE001 - whatever LiteRT refuses, the build reports it
        return str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
