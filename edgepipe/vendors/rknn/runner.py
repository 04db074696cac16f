"""Rockchip rknn-toolkit2 run inside its own environment: ``<rknn venv>/bin/python runner.py < request.json``.

This file is executed by the RKNN environment's Python, where edgepipe itself is not installed: it imports
only the standard library, numpy and ``rknn.api``. It reads one JSON request from stdin (``model``,
``target_platform``, ``workdir``, ``inputs``: a list of .npy files, one per model input, ``accuracy``: run the
simulator's per-layer accuracy analysis, ``answer``: the JSON file to write) and writes one JSON answer to
that file: the toolkit version, the status of each step and the accuracy analysis. The compiler's native log
(its layer table, with ``RKNN_LOG_LEVEL`` set by edgepipe) goes to this process's stdout and stderr, which
edgepipe reads: the native library writes there directly, so the answer cannot share stdout.
"""

import json
import os
import re
import sys
import traceback

#: Printed to stdout before the build is tried again with a rule disabled: the native log after it is the last
#: attempt's.
ATTEMPT_MARKER = "=== edgepipe: rknn build again, disable_rules +"
#: The most toolkit rules one compile may disable on the toolkit's advice.
MAX_DISABLED = 3


def _write_dataset(workdir, inputs):
    """rknn's dataset file: one line per sample, the .npy of each input separated by spaces."""
    path = os.path.join(workdir, "dataset.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(" ".join(inputs) + "\n")
    return path


def _read_text(path):
    if not os.path.isfile(path):
        return ""
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _step(answer, name, call):
    """One toolkit call: its return code, or -1 with the exception's last line when the toolkit raised on this
    graph (its quantizer and compiler raise, e.g. ``ValueError: cannot convert float NaN to integer``,
    rather than return an error code)."""
    try:
        answer["steps"][name] = call()
    except Exception as exc:  # noqa: BLE001 - the vendor compiler raising on this graph is its answer
        lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
        last = lines[-1] if lines else ""
        answer["steps"][name] = -1
        answer.setdefault("raised", {})[name] = last if last.startswith(type(exc).__name__) else \
            f"{type(exc).__name__}: {last}"
    return answer["steps"][name]


def _attempt(request, answer, log_path, disabled):
    """config, load_onnx and build (with the toolkit's rules named in ``disabled`` switched off); True when
    every step returned 0."""
    from rknn.api import RKNN  # the vendor tool: present only in this environment

    answer["steps"], answer["raised"] = {}, {}
    rknn = RKNN(verbose=True, verbose_file=log_path)
    options = {"target_platform": request["target_platform"], **({"disable_rules": disabled} if disabled else {})}
    try:
        ret = _step(answer, "config", lambda: rknn.config(**options))
        if ret == 0:
            ret = _step(answer, "load_onnx", lambda: rknn.load_onnx(model=request["model"]))
        if ret == 0:
            dataset = _write_dataset(request["workdir"], request["inputs"])
            ret = _step(answer, "build", lambda: rknn.build(do_quantization=True, dataset=dataset))
        if ret == 0 and request.get("accuracy"):
            # the toolkit's simulator can end the process (a speech enhancer: exit 1 at 89 % of the analysis): the
            # build's answer is written first, so that its placement survives with the analysis marked as failed
            _write_answer(request["answer"], {
                **answer, "steps": {**answer["steps"], "accuracy_analysis": -1},
                "raised": {**answer["raised"], "accuracy_analysis": "the toolkit's process ended during the analysis"},
                "log": _read_text(log_path)})
            snapshot = os.path.join(request["workdir"], "snapshot")
            _step(answer, "accuracy_analysis", lambda: rknn.accuracy_analysis(inputs=request["inputs"],
                                                                              output_dir=snapshot))
            answer["accuracy"] = _read_text(os.path.join(snapshot, "error_analysis.txt"))
    finally:
        rknn.release()
    return ret == 0


def run(request):
    """Load, quantize and build for ``target_platform``; optionally the accuracy analysis on the simulator.

    When a graph rewrite of the toolkit raises, the toolkit names the rule and advises ``disable_rules=[...]``
    in ``config()``; the build is then tried again with that rule off (at most MAX_DISABLED rules), and the
    answer says which rules were disabled and what the default build raised (``default_raised``). Before each
    new attempt a marker line goes to stdout, so edgepipe reads the layer table of the last attempt only."""
    from importlib.metadata import version

    answer = {"version": version("rknn-toolkit2"), "disabled_rules": []}
    while True:
        log_path = os.path.join(request["workdir"], f"rknn_build_{len(answer['disabled_rules'])}.log")
        if _attempt(request, answer, log_path, answer["disabled_rules"]):
            break
        advised = [rule for rule in _advised_rules(_read_text(log_path)) if rule not in answer["disabled_rules"]]
        if not advised or len(answer["disabled_rules"]) >= MAX_DISABLED:
            break
        answer.setdefault("default_raised", dict(answer["raised"]))
        answer["disabled_rules"].append(advised[0])
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
            os.write(stream.fileno(), f"{ATTEMPT_MARKER} {advised[0]}\n".encode())
    answer["log"] = _read_text(log_path)
    return answer


def _advised_rules(text):
    """The rules the toolkit advises disabling ("You can add disable_rules=['RULE'] in rknn.config()")."""
    found = []
    for match in re.finditer(r"disable_rules=\[([^\]]*)\]", text):
        found.extend(name.strip().strip("'\"") for name in match.group(1).split(",") if name.strip())
    return found


def main():
    request = json.loads(sys.stdin.read())
    try:
        answer = run(request)
    except Exception:  # noqa: BLE001 - any failure inside the vendor tool is reported to edgepipe, not raised
        answer = {"error": traceback.format_exc()}
    _write_answer(request["answer"], answer)


def _write_answer(path, answer):
    """The JSON answer, replaced whole (a reader never sees half of one)."""
    with open(path + ".part", "w", encoding="utf-8") as handle:
        json.dump(answer, handle)
    os.replace(path + ".part", path)


if __name__ == "__main__":
    main()
