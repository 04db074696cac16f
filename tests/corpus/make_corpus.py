"""The bad-input corpus: every input edgepipe must refuse cleanly, written deterministically, with a manifest.

``python tests/corpus/make_corpus.py OUT`` writes the files and ``OUT/manifest.json``:
one entry per bad input with the ``edgepipe`` arguments that feed it (``{corpus}``
and ``{out}`` stand for the corpus folder and an output folder), the exit code
expected, fragments the one error line must contain and environment variables
to set. No file needs TensorFlow to be written; the same bytes come out every run
(zip members carry a fixed date). tests/corpus/test_corpus.py runs every entry
through the real CLI; docs/reference/reliability.md describes them.
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.models.make_models import CLASSES, tiny_onnx  # noqa: E402

ZIP_DATE = (2020, 1, 1, 0, 0, 0)
ONNX_SHAPE = (2, 6, 6)  # tiny_onnx's sample shape (NCHW without the batch)
#: The Lambda's code: harmless when the layer is built, writes a marker file when EDGEPIPE_CORPUS_MARKER is set.
LAMBDA_SOURCE = ("lambda t: (__import__('pathlib').Path(__import__('os').environ['EDGEPIPE_CORPUS_MARKER'])"
                 ".write_text('code ran') if 'EDGEPIPE_CORPUS_MARKER' in __import__('os').environ else None, t)[1]")


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(zipfile.ZipInfo(name, ZIP_DATE), content)
    return path


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def savez(path: Path, **arrays: np.ndarray) -> Path:
    """``numpy.savez`` with fixed member dates, so the corpus is byte-identical on every run."""
    return _zip(path, {f"{name}.npy": _npy_bytes(array) for name, array in arrays.items()})


def _onnx_model(nodes: list[Any], inits: list[Any], opset: int = 17, extra_opsets: dict[str, int] | None = None,
                input_shape: list[int] | None = None) -> Any:
    from onnx import TensorProto, helper

    graph = helper.make_graph(nodes, "corpus", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                              input_shape or [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], inits)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in (extra_opsets or {}).items()]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def _external(model: Any, location: str) -> Any:
    from onnx import TensorProto

    tensor = model.graph.initializer[0]
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", location
    return model


def write_onnx(folder: Path) -> None:
    """Truncated, corrupt, unknown domain, opset too new, external-data traversal, absurd input shape."""
    import onnx
    from onnx import helper, numpy_helper

    good = tiny_onnx(folder / "model.onnx").read_bytes()
    (folder / "onnx_truncated.onnx").write_bytes(good[:150])
    corrupt = bytearray(good)
    corrupt[:16] = b"\xff" * 16
    (folder / "onnx_corrupt.onnx").write_bytes(bytes(corrupt))
    relu = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    custom = [helper.make_node("Exfiltrate", ["x"], ["y"], name="evil", domain="com.acme.secret")]
    onnx.save(_onnx_model(custom, [], extra_opsets={"com.acme.secret": 1}), folder / "onnx_unknown_domain.onnx")
    onnx.save(_onnx_model(relu, [], opset=29), folder / "onnx_opset_too_new.onnx")
    onnx.save(_onnx_model(relu, [], input_shape=[1, 1 << 20, 1 << 20, 4]), folder / "onnx_huge_input.onnx")
    onnx.save(_onnx_model(relu, [], opset=0), folder / "onnx_opset_zero.onnx")  # found by fuzz_readers.py
    short = numpy_helper.from_array(np.ones((1, 4), np.float32), "w")
    short.raw_data = short.raw_data * 2  # 8 floats for a 1x4 tensor: the checker passes it, ONNX Runtime does not
    onnx.save(_onnx_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [short]),
              folder / "onnx_runtime_refuses.onnx")  # found by fuzz_readers.py
    (folder / "secret.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    add = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    for name, location in (("parent", "../secret.bin"), ("absolute", "/etc/passwd"),
                           ("symlink", "link.bin"), ("missing", "nowhere.bin")):
        sub = folder / f"onnx_external_{name}"
        sub.mkdir()
        weight = numpy_helper.from_array(np.ones((1, 4), np.float32), "w")
        onnx.save(_external(_onnx_model(add, [weight]), location), sub / "model.onnx")
    (folder / "onnx_external_symlink" / "link.bin").symlink_to("../secret.bin")


def tiny_tflite() -> bytes:
    """A valid float TFLite flatbuffer built with the schema's object API: y = x + c, shape (1, 4)."""
    from ai_edge_litert import schema_py_generated as schema

    def tensor(name: str, buffer: int) -> Any:
        t = schema.TensorT()
        t.shape, t.type, t.buffer, t.name = [1, 4], schema.TensorType.FLOAT32, buffer, name
        return t

    code = schema.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.ADD
    code.version = 1
    op = schema.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, [0, 1], [2]
    sub = schema.SubGraphT()
    sub.tensors = [tensor("x", 0), tensor("c", 1), tensor("y", 0)]
    sub.inputs, sub.outputs, sub.operators, sub.name = [0], [2], [op], "main"
    empty, const = schema.BufferT(), schema.BufferT()
    const.data = list(np.arange(4, dtype=np.float32).tobytes())
    model = schema.ModelT()
    model.version, model.operatorCodes, model.subgraphs = 3, [code], [sub]
    model.buffers, model.description = [empty, const], "edgepipe corpus"
    return _pack(model)


def write_tflite(folder: Path) -> None:
    """Truncated and corrupt flatbuffers, and one declaring an absurd tensor."""
    from ai_edge_litert import schema_py_generated as schema

    good = tiny_tflite()
    (folder / "model.tflite").write_bytes(good)
    (folder / "tflite_truncated.tflite").write_bytes(good[: len(good) // 2])
    corrupt = bytearray(good)
    corrupt[8:40] = b"\xff" * 32
    (folder / "tflite_corrupt.tflite").write_bytes(bytes(corrupt))
    model = schema.ModelT.InitFromPackedBuf(good, 0)
    model.subgraphs[0].tensors[2].shape = [1, 1 << 20, 1 << 20, 4]
    (folder / "tflite_huge_tensor.tflite").write_bytes(_pack(model))
    model = schema.ModelT.InitFromPackedBuf(good, 0)  # found by fuzz_readers.py: int8 with an impossible zero point
    for t in model.subgraphs[0].tensors:
        t.type = schema.TensorType.INT8
        t.quantization = schema.QuantizationParametersT()
        t.quantization.scale, t.quantization.zeroPoint = [0.5], [300]
    model.buffers[1].data = list(np.arange(4, dtype=np.int8).tobytes())
    (folder / "tflite_bad_quantization.tflite").write_bytes(_pack(model))


def _pack(model: Any) -> bytes:
    import flatbuffers

    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def write_keras_lambda(path: Path) -> Path:
    """A ``.keras`` archive (config + metadata, as Keras 3.15 writes them) whose Lambda layer holds real code."""
    import base64
    import marshal

    code = next(c for c in compile(LAMBDA_SOURCE, "<corpus>", "eval").co_consts if hasattr(c, "co_code"))
    encoded = base64.encodebytes(marshal.dumps(code)).decode("ascii")
    dtype = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None}
    lam = {"module": "keras.layers", "class_name": "Lambda", "registered_name": None, "name": "evil",
           "config": {"name": "evil", "trainable": True, "dtype": dtype, "arguments": {},
                      "function": {"class_name": "__lambda__",
                                   "config": {"code": encoded, "defaults": None, "closure": None}}},
           "build_config": {"input_shape": [None, 4]},
           "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__",
                                        "config": {"shape": [None, 4], "dtype": "float32",
                                                   "keras_history": ["x", 0, 0]}}], "kwargs": {"mask": None}}]}
    inp = {"module": "keras.layers", "class_name": "InputLayer", "registered_name": None, "name": "x",
           "config": {"batch_shape": [None, 4], "dtype": "float32", "sparse": False, "ragged": False, "name": "x",
                      "optional": False}, "inbound_nodes": []}
    config = {"module": "keras.src.models.functional", "class_name": "Functional", "registered_name": "Functional",
              "config": {"name": "functional", "trainable": True, "layers": [inp, lam],
                         "input_layers": ["x", 0, 0], "output_layers": ["evil", 0, 0]},
              "build_config": {"input_shape": None}, "compile_config": {}}
    metadata = {"keras_version": "3.15.1", "date_saved": "2020-01-01@00:00:00"}
    return _zip(path, {"metadata.json": json.dumps(metadata).encode(), "config.json": json.dumps(config).encode()})


def write_data(folder: Path) -> None:
    """Calibration and evaluation files for tiny_onnx that are each wrong in one way."""
    rng = np.random.default_rng(0)
    good = rng.random((8, *ONNX_SHAPE), dtype=np.float32)
    labels = rng.integers(0, CLASSES, 8)
    savez(folder / "calib.npz", x=good)
    savez(folder / "eval.npz", x=good, labels=labels)
    savez(folder / "calib_object.npz", x=np.array([object(), {"a": 1}], dtype=object))
    (folder / "calib_object.npy").write_bytes(_npy_bytes(np.array([object()], dtype=object)))
    savez(folder / "calib_nan.npz", x=np.where(good > 0.5, np.nan, good).astype(np.float32))
    savez(folder / "calib_inf.npz", x=np.where(good > 0.5, np.inf, good).astype(np.float32))
    savez(folder / "calib_constant.npz", x=np.zeros((8, *ONNX_SHAPE), np.float32))
    (folder / "calib_empty_folder").mkdir()
    savez(folder / "calib_shape.npz", x=rng.random((8, 6, 6, 2), dtype=np.float32))
    savez(folder / "calib_dtype.npz", x=np.full((8, *ONNX_SHAPE), "0.5"))
    header = {"descr": "<f4", "fortran_order": False, "shape": (10**12, *ONNX_SHAPE)}
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    (folder / "calib_huge_header.npy").write_bytes(buffer.getvalue() + good.tobytes())
    truncated = _npy_bytes(good)[:-500]
    _zip(folder / "calib_truncated.npz", {"x.npy": truncated})
    savez(folder / "eval_labels_count.npz", x=good, labels=labels[:5])
    savez(folder / "eval_labels_range.npz", x=good, labels=labels + CLASSES)
    savez(folder / "eval_labels_float.npz", x=good, labels=labels.astype(np.float32))


FINDINGS = Path(__file__).resolve().parent / "findings"


def write_findings(folder: Path) -> None:
    """Fuzz findings kept verbatim: mutated real models, too tangled to rebuild by hand."""
    for path in sorted(FINDINGS.iterdir()):
        (folder / path.name).write_bytes(path.read_bytes())


def write_configs(folder: Path) -> None:
    """Target profiles and build configs that are wrong."""
    targets = folder / "targets"
    targets.mkdir()
    (targets / "broken-syntax.toml").write_text('description = "never closed\n')
    (targets / "typo-key.toml").write_text('inherit = "host-cpu"\ndescripton = "a typo"\n')
    (targets / "loop-a.toml").write_text('inherit = "loop-b"\ndescription = "a"\ndevice_class = "cpu"\n')
    (targets / "loop-b.toml").write_text('inherit = "loop-a"\ndescription = "b"\ndevice_class = "cpu"\n')
    (folder / "config_malformed.toml").write_text('model = "model.onnx\n')
    (folder / "config_newline_key.toml").write_text('"two\\nlines" = 1\n')  # found by tests/fuzz: a 2-line error
    (folder / "config_tiny_limit.toml").write_text('model = "model.onnx"\n[limits]\nmax_model_mb = 0.0001\n')
    (folder / "a_file").write_text("an output folder cannot live under a file\n")
    (folder / "config_timeout.toml").write_text(
        'model = "model.onnx"\n[data]\ncalibration = "calib.npz"\nevaluation = "eval.npz"\n'
        "[latency]\nwarmup = 10000\nruns = 100000\n[limits]\nstage_timeout_s = 0.5\n")


def _entry(name: str, args: list[str], fragments: list[str], names: str, code: int = 1,
           env: dict[str, str] | None = None) -> dict[str, Any]:
    return {"name": name, "args": args, "exit_code": code, "fragments": fragments, "names": names,
            "env": env or {}}


def _build(*args: str) -> list[str]:
    return ["build", "-q", "--output", "{out}", *args]


def manifest() -> list[dict[str, Any]]:
    """Every corpus entry: how to run it and the answer expected."""
    m, c, e = "{corpus}/model.onnx", "{corpus}/calib.npz", "{corpus}/eval.npz"
    t = {"EDGEPIPE_TARGETS_PATH": "{corpus}/targets"}
    entries = [_entry(f"onnx_{kind}", _build("--model", f"{{corpus}}/onnx_{kind}.onnx"), [frag],
                      f"onnx_{kind}.onnx") for kind, frag in (
        ("truncated", "not a valid ONNX model"), ("corrupt", "not a valid ONNX model"),
        ("unknown_domain", "unknown domain 'com.acme.secret'"), ("opset_too_new", "newer than ONNX Runtime"),
        ("huge_input", "above the limit"), ("opset_zero", "not a valid version"),
        ("runtime_refuses", "ONNX Runtime cannot load the model"))]
    entries += [_entry(f"onnx_external_{kind}", _build("--model", f"{{corpus}}/onnx_external_{kind}/model.onnx"),
                       [frag], f"onnx_external_{kind}/model.onnx") for kind, frag in (
        ("parent", "outside the model's folder"), ("absolute", "outside the model's folder"),
        ("symlink", "outside the model's folder"), ("missing", "is missing"))]
    entries += [_entry(f"tflite_{kind}", _build("--model", f"{{corpus}}/tflite_{kind}.tflite"), [frag],
                       f"tflite_{kind}.tflite") for kind, frag in (
        ("truncated", "TFLite"), ("corrupt", "TFLite"), ("huge_tensor", "above the limit"),
        ("bad_quantization", "LiteRT cannot prepare the model"))]
    entries.append(_entry("onnx_optimizer_refuses", _build("--model", "{corpus}/onnx_optimizer_refuses.onnx"),
                          ["ONNX Runtime cannot load the model"], "onnx_optimizer_refuses.onnx"))
    entries.append(_entry("keras_lambda", _build("--model", "{corpus}/keras_lambda.keras"),
                          ["Lambda layer", "none of its code was run"], "keras_lambda.keras",
                          env={"EDGEPIPE_CORPUS_MARKER": "{tmp}/LAMBDA_CODE_RAN"}))
    calib = {"calib_object_npz": ("calib_object.npz", "pickled"), "calib_object_npy": ("calib_object.npy", "pickled"),
             "calib_nan": ("calib_nan.npz", "NaN or Inf"), "calib_inf": ("calib_inf.npz", "NaN or Inf"),
             "calib_constant": ("calib_constant.npz", "calibration data is constant"),
             "calib_empty_folder": ("calib_empty_folder", "folder"),
             "calib_shape": ("calib_shape.npz", "the model takes 2x6x6"),
             "calib_dtype": ("calib_dtype.npz", "expected numbers"),
             "calib_huge_header": ("calib_huge_header.npy", "above the limit"),
             "calib_truncated": ("calib_truncated.npz", "holds only")}
    entries += [_entry(name, _build("--model", m, "--calib", f"{{corpus}}/{file}", "--eval", e), [frag], file)
                for name, (file, frag) in calib.items()]
    evaluation = {"eval_labels_count": "must be 8 integer class ids", "eval_labels_range": "outside the model's 4",
                  "eval_labels_float": "integer class ids"}
    entries += [_entry(name, _build("--model", m, "--calib", c, "--eval", f"{{corpus}}/{name}.npz"), [frag],
                       f"{name}.npz") for name, frag in evaluation.items()]
    entries += [
        _entry("unknown_target", _build("--model", m, "--target", "pocket-calculator"),
               ["unknown target", "host-cpu"], "pocket-calculator"),
        _entry("profile_malformed", _build("--model", m, "--target", "broken-syntax"), ["malformed profile"],
               "targets/broken-syntax.toml", env=t),
        _entry("profile_unknown_key", _build("--model", m, "--target", "typo-key"), ["unknown key 'descripton'"],
               "targets/typo-key.toml", env=t),
        _entry("profile_inherit_cycle", _build("--model", m, "--target", "loop-a"), ["inherit cycle"],
               "targets/loop-a.toml", env=t),
        _entry("config_malformed", ["build", "-q", "--config", "{corpus}/config_malformed.toml"], ["not valid TOML"],
               "config_malformed.toml"),
        _entry("config_newline_key", ["build", "-q", "--config", "{corpus}/config_newline_key.toml"],
               ["unknown key 'two\\nlines'"], "config_newline_key.toml"),
        _entry("model_over_size_limit", ["build", "-q", "--output", "{out}", "--config",
                                         "{corpus}/config_tiny_limit.toml"], ["above the limit"], "model.onnx"),
        _entry("output_not_writable", ["build", "-q", "--model", m, "--calib", c, "--eval", e, "--output",
                                       "{corpus}/a_file/out"], ["not writable"], "a_file"),
    ]
    return entries


def special_entries() -> list[dict[str, Any]]:
    """Entries that need a fault or a second process: run by tests/corpus/test_faults.py, listed for the docs."""
    return [
        {"name": "disk_full", "test": "test_full_disk_is_a_user_error_with_no_partial_output", "exit_code": 1,
         "fragments": ["no space left on the device"], "names": "{out}/model/host-cpu"},
        {"name": "sigint_mid_build", "test": "test_interrupt_mid_build_exits_130_and_leaves_nothing[sigint]",
         "exit_code": 130, "fragments": ["interrupted; no outputs were written"], "names": ""},
        {"name": "sigterm_mid_build", "test": "test_interrupt_mid_build_exits_130_and_leaves_nothing[sigterm]",
         "exit_code": 130, "fragments": ["interrupted; no outputs were written"], "names": ""},
        {"name": "stage_timeout", "test": "test_stage_timeout_stops_the_build_cleanly", "exit_code": 1,
         "fragments": ["ran longer than", "Raise limits.stage_timeout_s"], "names": "limits.stage_timeout_s",
         "args": ["build", "-q", "--output", "{out}", "--config", "{corpus}/config_timeout.toml"]},
        {"name": "concurrent_builds", "test": "test_two_concurrent_builds_into_one_folder", "exit_code": 0,
         "fragments": [], "names": ""},
    ]


def main(out: Path) -> Path:
    """Write the whole corpus into ``out`` (which must not exist yet) and return the manifest's path."""
    out.mkdir(parents=True)
    write_onnx(out)
    write_tflite(out)
    write_keras_lambda(out / "keras_lambda.keras")
    write_data(out)
    write_configs(out)
    write_findings(out)
    path = out / "manifest.json"
    path.write_text(json.dumps(manifest() + special_entries(), indent=1) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    print(main(Path(sys.argv[1])))
