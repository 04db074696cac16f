"""The old import path tests.support.graphs, kept only for tests/support/test_constraints*.py:
the models now live in tests/models/. Delete this module once those tests import from there."""

from tests.models.graphs import conv, loop_onnx, onnx_graph, single, squeeze_if_onnx  # noqa: F401
