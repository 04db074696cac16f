"""Float ONNX through tf2onnx (``from_function``; ``from_keras`` does not take Keras 3 models)."""

from __future__ import annotations

from pathlib import Path

from edgepipe.export.tf_function import TFGraph

#: ONNX opset of exported models: supported by onnxruntime, its quantizer and the QNN provider.
ONNX_OPSET = 17


def export_onnx(graph: TFGraph, path: Path, opset: int = ONNX_OPSET) -> Path:
    """Write the float ONNX of ``graph`` to ``path``."""
    import onnx
    import tf2onnx

    model_proto, _ = tf2onnx.convert.from_function(graph.function, input_signature=graph.input_signature,
                                                   opset=opset)
    model_proto.producer_name = "edgepipe"
    onnx.save(model_proto, str(path))
    return path
