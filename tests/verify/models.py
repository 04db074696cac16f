"""The old import path tests.verify.models, kept only for tests/support/test_constraints*.py:
the models now live in tests/models/. Delete this module once those tests import from there."""

from tests.models.probes.arithmetic import (  # noqa: F401
    l2_norm_onnx,
    log10_scalings_onnx,
    min_max_front_onnx,
    nan_fill_onnx,
    run_time_divisions_onnx,
)
from tests.models.probes.convolutions import (  # noqa: F401
    auto_padded_conv_onnx,
    channel_gate_onnx,
    conv_net_onnx,
    dilated_conv1d_onnx,
    hard_swish_1d_onnx,
    one_row_conv_onnx,
    spectrogram_channel_onnx,
    squeezed_conv_onnx,
    transposed_gelu_onnx,
)
from tests.models.probes.heads import flattened_dense_onnx  # noqa: F401
from tests.models.probes.inputs import (  # noqa: F401
    default_constant_of_shape_onnx,
    int32_ids_onnx,
    nhwc_input_onnx,
    run_time_expand_onnx,
    runtime_if_onnx,
)
from tests.models.probes.onnx_files import qdq_onnx  # noqa: F401
from tests.models.probes.sequences import reverse_sequence_onnx, stacked_gru_onnx  # noqa: F401
from tests.models.probes.tflite import variable_tflite  # noqa: F401
