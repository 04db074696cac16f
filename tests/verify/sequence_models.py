"""The old import path tests.verify.sequence_models, kept only for tests/support/test_constraints*.py:
the models now live in tests/models/. Delete this module once those tests import from there."""

from tests.models.probes.sequences import (  # noqa: F401
    bidirectional_layers_onnx,
    one_column_heads_onnx,
    peephole_lstm_onnx,
    recurrent_states_onnx,
)
