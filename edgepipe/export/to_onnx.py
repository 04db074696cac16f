"""Float ONNX through tf2onnx (``from_function``; ``from_keras`` does not take Keras 3 models).

A function that captures constant tensors (not variables) — what a restored SavedModel's
signature does with tensors its layers built outside ``call``, e.g. an audio front end's fixed
filter bank — is frozen first: tf2onnx's ``from_function`` would turn each such capture into an
extra graph input (a model with 4 inputs for a network that takes 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edgepipe.export.tf_function import TFGraph

#: ONNX opset of exported models: supported by onnxruntime, its quantizer and the QNN provider.
ONNX_OPSET = 17


def _captures_constants(concrete: Any) -> bool:
    """True when the concrete function captures tensors other than variable handles."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    return any(capture.dtype != tf.resource for capture in concrete.captured_inputs)


def _from_frozen(concrete: Any, graph: TFGraph, opset: int) -> Any:
    """tf2onnx of ``concrete`` with every capture folded into a constant; inputs named as the signature names them."""
    import tf2onnx  # heavy optional dependency
    from tensorflow.python.framework.convert_to_constants import (  # heavy optional dependency
        convert_variables_to_constants_v2,
    )

    frozen = convert_variables_to_constants_v2(concrete)
    model_proto, _ = tf2onnx.convert.from_graph_def(
        frozen.graph.as_graph_def(), input_names=[t.name for t in frozen.inputs],
        output_names=[t.name for t in frozen.outputs], opset=opset)
    for value, spec in zip(model_proto.graph.input, graph.input_signature):
        old, value.name = value.name, spec.name
        for node in model_proto.graph.node:
            for k, name in enumerate(node.input):
                if name == old:
                    node.input[k] = spec.name
    return model_proto


def export_onnx(graph: TFGraph, path: Path, opset: int = ONNX_OPSET) -> Path:
    """Write the float ONNX of ``graph`` to ``path``."""
    import onnx
    import tf2onnx

    concrete = graph.function.get_concrete_function()
    if _captures_constants(concrete):
        model_proto = _from_frozen(concrete, graph, opset)
    else:
        model_proto, _ = tf2onnx.convert.from_function(graph.function, input_signature=graph.input_signature,
                                                       opset=opset)
    model_proto.producer_name = "edgepipe"
    onnx.save(model_proto, str(path))
    return path
