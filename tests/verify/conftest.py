"""The support tests' TFLite fixtures, shared with the verification tests."""

from tests.support.conftest import probe_graphs, probe_tflite  # noqa: F401 - pytest fixtures
