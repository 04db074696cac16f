"""LiteRT (``ai_edge_litert``) interpreter, with XNNPACK as LiteRT applies it by default.

Quantized inputs and outputs are converted here with the tensor's own scale
and zero point, so callers always feed and read real values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from edgepipe.runtimes.base import Runner
from edgepipe.tensors import Signature, TensorSpec


def _interpreter(**kwargs: Any) -> Any:
    from ai_edge_litert.interpreter import Interpreter

    from edgepipe.native_logs import native_stderr_to_log

    with native_stderr_to_log():
        return Interpreter(**kwargs)


def _spec(detail: dict[str, Any], real: bool) -> TensorSpec:
    shape = tuple(int(d) if d > 0 else None for d in detail.get("shape_signature", detail["shape"]))
    scale, _ = detail["quantization"]
    dtype = np.dtype(np.float32) if real and scale else np.dtype(detail["dtype"])
    return TensorSpec(detail["name"], shape, dtype)


def read_signature(content: bytes) -> Signature:
    """The signature of a TFLite flatbuffer as callers see it: quantized tensors take and give real values."""
    interpreter = _interpreter(model_content=content)
    return Signature(inputs=tuple(_spec(d, True) for d in interpreter.get_input_details()),
                     outputs=tuple(_spec(d, True) for d in interpreter.get_output_details()))


def quantize(array: np.ndarray, detail: dict[str, Any]) -> np.ndarray:
    """Real values → the tensor's integer type, by its scale and zero point."""
    scale, zero_point = detail["quantization"]
    if not scale:
        return np.asarray(array, dtype=detail["dtype"])
    info = np.iinfo(detail["dtype"])
    return np.clip(np.round(array / scale) + zero_point, info.min, info.max).astype(detail["dtype"])


def dequantize(array: np.ndarray, detail: dict[str, Any]) -> np.ndarray:
    """The tensor's integers → real values (float32)."""
    scale, zero_point = detail["quantization"]
    if not scale:
        return array
    return ((array.astype(np.float32) - zero_point) * scale).astype(np.float32)


class LiteRTRunner(Runner):
    """A LiteRT ``Interpreter``; quantized I/O is converted to and from real values."""

    runtime = "litert"

    def activate_impl(self) -> Signature:
        self._interp = _interpreter(model_path=str(self.path), num_threads=self.threads)
        from edgepipe.native_logs import native_stderr_to_log

        with native_stderr_to_log():  # XNNPACK announces itself on the first allocation
            self._interp.allocate_tensors()
        self._inputs = self._interp.get_input_details()
        self._outputs = self._interp.get_output_details()
        return Signature(inputs=tuple(_spec(d, True) for d in self._inputs),
                         outputs=tuple(_spec(d, True) for d in self._outputs))

    def infer_impl(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        for array, detail in zip(inputs, self._inputs):
            self._interp.set_tensor(detail["index"], quantize(array, detail))
        self._interp.invoke()
        return [dequantize(self._interp.get_tensor(d["index"]), d) for d in self._outputs]

    def close_impl(self) -> None:
        self._interp = None
