"""ONNX Runtime on the CPU execution provider."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from edgepipe.runtimes.base import Runner
from edgepipe.tensors import Signature, TensorSpec

_ORT_TYPES = {
    "tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64,
    "tensor(int8)": np.int8, "tensor(uint8)": np.uint8, "tensor(int16)": np.int16,
    "tensor(int32)": np.int32, "tensor(int64)": np.int64, "tensor(bool)": np.bool_,
}


def _spec(arg: object) -> TensorSpec:
    shape = tuple(d if isinstance(d, int) and d > 0 else None for d in arg.shape)  # type: ignore[attr-defined]
    return TensorSpec(arg.name, shape, np.dtype(_ORT_TYPES.get(arg.type, np.float32)))  # type: ignore[attr-defined]


#: ONNX Runtime session option that keeps QDQ pairs unfused (each int8 op computed as dequantize → float op →
#: quantize, i.e. exact int32 accumulation up to float rounding).
DISABLE_QDQ_FUSION = "session.disable_quant_qdq"


class OnnxRuntimeRunner(Runner):
    """An ``onnxruntime.InferenceSession`` on ``CPUExecutionProvider``.

    With ``reference_int8`` the session does not fuse QDQ pairs into ONNX Runtime's int8 kernels. Those kernels
    are host-specific: on x86 CPUs without VNNI (AVX2 only) the u8×s8 multiply-add saturates 16-bit pair sums,
    and the bundled digits model loses 2 points there (0.98 → 0.96) that it keeps on VNNI hosts and on NPUs,
    which accumulate in int32. Accuracy gates use the reference semantics so a verdict does not depend on the CI
    machine's CPU; host latency and host int8 fidelity use the fused kernels, as deployed.
    """

    runtime = "onnxruntime"

    def __init__(self, path: Path, threads: int | None = None, *, reference_int8: bool = False,
                 graph_as_written: bool = False):
        super().__init__(path, threads)
        self.reference_int8 = reference_int8
        self.graph_as_written = graph_as_written

    def activate_impl(self) -> Signature:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        if self.threads:
            options.intra_op_num_threads = self.threads
        if self.reference_int8:
            options.add_session_config_entry(DISABLE_QDQ_FUSION, "1")
        if self.graph_as_written:  # no fusions: each node computed as written
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        self._session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        self._input_names = [i.name for i in self._session.get_inputs()]
        return Signature(inputs=tuple(_spec(i) for i in self._session.get_inputs()),
                         outputs=tuple(_spec(o) for o in self._session.get_outputs()))

    def infer_impl(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        feed = {name: np.asarray(array, dtype=spec.dtype)
                for name, array, spec in zip(self._input_names, inputs, self.signature.inputs)}
        return list(self._session.run(None, feed))

    def close_impl(self) -> None:
        self._session = None
