"""Where a third-party tool's failure becomes a reported result: one boundary per tool edgepipe runs.

A boundary (``with contained(ORT_QUANTIZER): ...``) turns the exceptions the tool
raises into :class:`~edgepipe.errors.ToolFailed` (tool name, the tool's message, a
next step), which the stage records while the build goes on without that artifact.

Only the tool's own failures are converted: the exception must be one of the types the
tool raises (read from its code: ONNX Runtime's pybind errors, the TFLite converter's
``ConverterError``, the ``ValueError``/``RuntimeError``/``AssertionError`` its Python
raises), and the innermost frame that raised it, past generic helpers (numpy, onnx,
protobuf, the standard library), must belong to the tool's packages. The same exception
raised in edgepipe's own code (a calibration reader, a runner) is a bug and stays exit 3.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from edgepipe.artifacts import Artifact
from edgepipe.errors import ToolFailed
from edgepipe.load.rejections import raised_by
from edgepipe.runtimes import open_runner
from edgepipe.stage_log import StageLog

#: Exceptions the tools' Python code raises itself (grep of ``raise`` in their packages).
_PYTHON_ERRORS = (ValueError, TypeError, KeyError, IndexError, AssertionError, RuntimeError, NotImplementedError,
                  AttributeError, ZeroDivisionError)
#: ONNX Runtime's C++ errors, as its pybind module defines them (none derives from a built-in error).
_ORT_ERRORS = tuple(("onnxruntime.capi.onnxruntime_pybind11_state", name) for name in (
    "Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException", "InvalidProtobuf",
    "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail", "ModelLoadCanceled", "ModelRequiresCompilation"))
_ONNX_ERRORS = (("onnx.checker", "ValidationError"), ("onnx.shape_inference", "InferenceError"))


@dataclass(frozen=True)
class Tool:
    """One third-party tool: its name, the packages its code lives in, the errors it raises, and advice."""

    name: str
    packages: tuple[str, ...]
    errors: tuple[tuple[str, str], ...]
    advice: Callable[[str], str]

    def exception_types(self) -> tuple[type[BaseException], ...]:
        """The tool's exception classes (its optional modules imported only now; absent ones are left out)."""
        found: list[type[BaseException]] = list(_PYTHON_ERRORS)
        for module, name in self.errors:
            try:
                found.append(getattr(importlib.import_module(module), name))  # heavy optional dependency
            except (ImportError, AttributeError):
                continue
        return tuple(found)


def _first_line(exc: BaseException) -> str:
    """The tool's message: its first line, without ONNX Runtime's error-code prefix (the cause is at the end)."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    line = line.split(" : FAIL : ")[-1].split(" : INVALID_GRAPH : ")[-1].strip()
    return _PATH.sub(lambda m: m.group(2), line)  # file names only: reports stay byte-identical between builds


_PATH = re.compile(r"(/[\w.+-]+)+/([\w.+-]+)")


@contextmanager
def contained(tool: Tool) -> Iterator[None]:
    """Run the body; a failure raised by ``tool`` itself becomes :class:`ToolFailed`, anything else propagates."""
    try:
        yield
    except ToolFailed:
        raise
    except tool.exception_types() as exc:
        if not raised_by(exc, tool.packages):
            raise
        message = _first_line(exc)
        shown = message if len(message) <= 600 else f"{message[:200]} … {message[-380:]}"
        raise ToolFailed(tool.name, shown, tool.advice(message)) from exc


#: A graph ONNX's shape inference rejects although every input is static: the tool that wrote it is at fault.
_INCONSISTENT_GRAPH = ("the tool wrote a graph that ONNX shape inference rejects (the node named is inconsistent, not "
                       "an input): deploy the other format (it is still built and checked), or simplify the model "
                       "(python -m onnxsim) and build that file; if an input still has a dynamic dimension, fix it "
                       "with input_shapes in the config")


def _quantizer_advice(message: str) -> str:
    low = message.lower()
    if "axis" in low and ("dequantizelinear" in low or "quantizelinear" in low or "attribute" in low):
        return ('set quantization.granularity = "per-tensor" (per-channel QDQ needs ONNX opset 13 or newer)')
    if "truth value of an array" in low or "int32_bias" in low:
        return 'set quantization.granularity = "per-tensor" (ONNX Runtime\'s per-channel bias-scale step fails)'
    if "operands could not be broadcast" in low:  # e.g. a grouped ConvTranspose: per-channel scales per group
        return 'set quantization.granularity = "per-tensor" (ONNX Runtime\'s per-channel scales do not match the bias)'
    if "shapeinferenceerror" in low:  # the inputs are static by then: the quantizer wrote an inconsistent graph
        return _INCONSISTENT_GRAPH
    if "dimension" in low or "shape" in low:
        return "fix every dynamic input dimension with input_shapes = { <input> = [1, ...] } in the config"
    if not low or low == "assertionerror":
        return ("fix the dynamic input dimensions with input_shapes in the config, or give a model with its shape "
                "computations constant-folded; the float artifacts are still built and checked")
    return "the float artifacts are still built and checked; run with --debug for the quantizer's traceback"


def _runtime_advice(message: str) -> str:
    low = message.lower()
    if "truth value of an array" in low:
        return _quantizer_advice(message)
    if "axis" in low:
        return 'set quantization.granularity = "per-tensor" (per-channel QDQ needs ONNX opset 13 or newer)'
    if "shapeinferenceerror" in low:
        return _INCONSISTENT_GRAPH
    if "dimension" in low or "shape" in low:
        return "fix every dynamic input dimension with input_shapes = { <input> = [1, ...] } in the config"
    if "no op registered" in low or "custom" in low:
        return "the model uses an op this runtime lacks; deploy the other format, or replace the op before export"
    return ("this artifact is left out (the other artifacts are still evaluated and checked); deploy the other "
            "format, or convert this one yourself and build that file")


def _tflite_quantizer_advice(message: str) -> str:
    if "LiteRT crashed" in message or "did not finish" in message:
        return ("LiteRT itself fails on the int8 TFLite ai-edge-quantizer wrote (in a child process: this build went "
                "on): deploy the ONNX artifact (targets with onnx in deploy_formats are still checked), or give the "
                "source model (.onnx, .keras) instead of a float TFLite")
    if "zero_point" in message or "failed to prepare" in message or "failed to invoke" in message:
        return ("LiteRT's int8 kernels refuse what ai-edge-quantizer made of this graph: deploy the ONNX artifact "
                "(targets with onnx in deploy_formats are still checked), or give the source model (.onnx, .keras) "
                "instead of a float TFLite")
    return ("the int8 TFLite is left out: give the source model (.onnx or .keras) instead of the float TFLite; "
            "targets that deploy ONNX are still checked")


def _converter_advice(message: str) -> str:
    if "does not compute" in message:  # converted, but another function (edgepipe.export.float_match)
        return ("targets that deploy ONNX are still checked; for TFLite targets convert the model from its "
                "training framework (Keras, PyTorch) and build that .tflite")
    if "dimension" in message.lower() or "shape" in message.lower():
        return "fix every dynamic input dimension with input_shapes = { <input> = [1, ...] } in the config"
    return ("targets that deploy ONNX are still checked; for TFLite targets convert the model yourself and build "
            "the .tflite, or replace the op the converter names")


ORT_QUANTIZER = Tool("onnxruntime.quantization", ("onnxruntime",), _ORT_ERRORS + _ONNX_ERRORS, _quantizer_advice)
AI_EDGE_QUANTIZER = Tool("ai-edge-quantizer", ("ai_edge_quantizer", "ai_edge_litert", "tensorflow"), (),
                         _tflite_quantizer_advice)
TFLITE_CONVERTER = Tool("TFLite converter", ("tensorflow", "tf_keras"),
                        (("tensorflow.lite.python.convert_phase", "ConverterError"),), _converter_advice)
TF2ONNX = Tool("tf2onnx", ("tf2onnx", "tensorflow"), _ONNX_ERRORS, _converter_advice)
ONNXRUNTIME = Tool("onnxruntime", ("onnxruntime",), _ORT_ERRORS + _ONNX_ERRORS, _runtime_advice)
LITERT = Tool("LiteRT", ("ai_edge_litert", "tensorflow"), (), _runtime_advice)
#: LiteRT running what ai-edge-quantizer wrote: its refusal is the quantizer's output failing.
LITERT_ON_QUANTIZED = Tool("LiteRT", ("ai_edge_litert", "tensorflow"), (), _tflite_quantizer_advice)


def _equalizer_advice(message: str) -> str:
    if "No module named" in message or "cannot import" in message:
        return "reinstall the equalizer and the PyTorch it imports: pip install 'edgepipe[aimet]'"
    return ("the ladder goes on without equalization (its other steps still run); run with --debug for AIMET's "
            "traceback")


#: AIMET-ONNX's cross-layer equalization (the ``aimet`` extra): an import it cannot make is its failure too.
AIMET_ONNX = Tool("AIMET-ONNX", ("aimet_onnx", "torch"), (("builtins", "ImportError"), *_ONNX_ERRORS),
                  _equalizer_advice)


def _nncf_advice(message: str) -> str:
    if "No module named" in message or "cannot import" in message:
        return "reinstall NNCF: pip install 'nncf==3.4.0'"
    return "the ladder goes on without NNCF's candidate (its other steps still run); run with --debug for NNCF's log"


#: NNCF's post-training quantization (ladder step ``nncf``): an import it cannot make is its failure too.
NNCF = Tool("NNCF", ("nncf", "onnxruntime"), (("builtins", "ImportError"), *_ORT_ERRORS, *_ONNX_ERRORS), _nncf_advice)


def onnx2tf_failure(message: str) -> ToolFailed:
    """onnx2tf runs in its own process; edgepipe's ``ConversionError`` carries its last error line."""
    return ToolFailed("onnx2tf", message, _converter_advice(message))


def runtime_of(fmt: str) -> Tool:
    """The runtime boundary of an artifact format: ONNX Runtime for ``onnx``, LiteRT for ``tflite``."""
    return ONNXRUNTIME if fmt == "onnx" else LITERT


def loadable(artifacts: list[Artifact], stages: StageLog, stage: str) -> list[Artifact]:
    """The artifacts their runtime loads; one it refuses is recorded as that runtime's failure and left out."""
    kept = []
    for artifact in artifacts:
        try:
            with contained(runtime_of(artifact.format)), open_runner(artifact.path) as runner:
                runner.signature  # noqa: B018 - loading is the check
        except ToolFailed as failure:
            stages.fail(stage, failure, artifact=artifact.key)
            artifact.path.unlink(missing_ok=True)
            continue
        kept.append(artifact)
    return kept
