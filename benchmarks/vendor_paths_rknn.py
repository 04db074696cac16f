"""Rockchip's own flow on one float ONNX model, run by the RKNN environment's Python (``benchmarks/vendor_paths.py``).

``<rknn venv>/bin/python vendor_paths_rknn.py < request.json``: ``config(target_platform=...)``, ``load_onnx``,
``build(do_quantization=True, dataset=...)`` with the model's own calibration samples (the toolkit's quantizer,
its defaults), then ``init_runtime()`` (the toolkit's simulator: no board) and ``inference`` on each evaluation
sample. Like ``edgepipe/vendors/rknn/runner.py`` it imports only the standard library, numpy and ``rknn.api``
(edgepipe is not installed there). The request holds ``model``, ``target_platform``, ``workdir``, ``dataset`` (per
calibration sample, one .npy per input in the model's own layout, as rknn-toolkit2 2.5.0 checks it), ``evaluation``
(per sample, one .npy per input in the model's own layout, fed with ``data_format='nchw'``) and ``answer`` (the
JSON file to write): the toolkit version, each step's return code, what a step raised, the outputs file (one stacked
array per output, ``output_<i>``) and the toolkit's Python log. The compiler's native layer table goes to stdout and
stderr.
"""

import json
import os
import sys
import traceback


def _step(answer, name, call):
    """One toolkit call: its return code, or -1 with the exception's last line when the toolkit raised."""
    try:
        answer["steps"][name] = call()
    except Exception as exc:  # noqa: BLE001 - the vendor tool raising on this graph is its answer
        lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
        answer["steps"][name] = -1
        answer["raised"][name] = f"{type(exc).__name__}: {lines[-1] if lines else ''}"
    return answer["steps"][name]


def _dataset_file(workdir, samples):
    """The toolkit's dataset file: one line per sample, the .npy of each input separated by spaces."""
    path = os.path.join(workdir, "dataset.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(" ".join(files) + "\n" for files in samples)
    return path


def _infer(rknn, request):
    """The simulator's outputs on every evaluation sample, stacked per output into ``outputs.npz``."""
    import numpy as np

    per_sample = []
    for files in request["evaluation"]:
        arrays = [np.load(path) for path in files]
        outputs = rknn.inference(inputs=arrays, data_format=["nchw"] * len(arrays))
        if outputs is None:
            raise RuntimeError("inference returned no outputs")
        per_sample.append([np.asarray(o, np.float32) for o in outputs])
    path = os.path.join(request["workdir"], "outputs.npz")
    np.savez(path, **{f"output_{i}": np.concatenate([s[i] for s in per_sample])
                      for i in range(len(per_sample[0]))})
    return path


def run(request):
    from importlib.metadata import version

    from rknn.api import RKNN  # the vendor tool: present only in this environment

    answer = {"version": version("rknn-toolkit2"), "steps": {}, "raised": {}}
    log_path = os.path.join(request["workdir"], "rknn_build.log")
    rknn = RKNN(verbose=True, verbose_file=log_path)
    try:
        ret = _step(answer, "config", lambda: rknn.config(target_platform=request["target_platform"]))
        if ret == 0:
            ret = _step(answer, "load_onnx", lambda: rknn.load_onnx(model=request["model"]))
        if ret == 0:
            dataset = _dataset_file(request["workdir"], request["dataset"])
            ret = _step(answer, "build", lambda: rknn.build(do_quantization=True, dataset=dataset))
        if ret == 0:
            ret = _step(answer, "init_runtime", lambda: rknn.init_runtime())
        if ret == 0:
            def infer():
                answer["outputs"] = _infer(rknn, request)
                return 0

            _step(answer, "inference", infer)
    finally:
        rknn.release()
    if os.path.isfile(log_path):
        with open(log_path, encoding="utf-8", errors="replace") as handle:
            answer["log"] = handle.read()
    return answer


def main():
    request = json.loads(sys.stdin.read())
    try:
        answer = run(request)
    except Exception:  # noqa: BLE001 - any failure inside the vendor tool is an answer, not a crash
        answer = {"error": traceback.format_exc()}
    with open(request["answer"] + ".part", "w", encoding="utf-8") as handle:
        json.dump(answer, handle)
    os.replace(request["answer"] + ".part", request["answer"])


if __name__ == "__main__":
    main()
