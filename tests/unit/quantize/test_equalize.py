"""Ladder step (c), cross-layer equalization: skipped with the install line when AIMET-ONNX is absent; with it,
the equalized float model keeps the function and evens out the channel ranges, and the step scores it.

The model is a Conv-ReLU-Conv whose first convolution's output channels span four decades (no batch
normalisation): what per-tensor int8 rounds away and CLE repairs. Real ONNX Runtime and, where installed, real
AIMET-ONNX; only the "is AIMET installed" check is replaced where its absence is under test.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

from edgepipe.quantize import equalization
from edgepipe.quantize.ladder import LadderContext, LadderSettings, run_ladder
from edgepipe.quantize.markdown import _letter
from edgepipe.quantize.steps import equalize as equalize_module
from tests.models.onnx_exports import conv_relu_conv, image_batches
from tests.unit.quantize.conv_context import conv_context

SETTINGS = LadderSettings(steps=("ptq", "calibration", "equalize"), granularity="per-tensor", methods=("minmax",),
                          granularities=("per-tensor",), precisions=("int8",))
#: AIMET-ONNX is imported only through edgepipe, which keeps its import from reconfiguring the process's logging.
needs_aimet = pytest.mark.skipif(equalization.aimet_missing(), reason="AIMET-ONNX is not installed")


def _outputs(path: Path, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return np.concatenate([session.run(None, {"x": sample[None]})[0] for sample in x])


def _channel_spread(path: Path, name: str) -> float:
    """Largest over smallest per-output-channel absolute maximum of weight ``name``."""
    weights = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer}
    ranges = np.abs(weights[name].reshape(len(weights[name]), -1)).max(1)
    return float(ranges.max() / ranges.min())


def _context(folder: Path) -> LadderContext:
    return conv_context(folder, SETTINGS)


def test_the_step_is_letter_c_between_calibration_and_nncf() -> None:
    assert [_letter(s) for s in ("ptq", "calibration", "equalize", "nncf", "mixed", "qat")] == list("abcdef")


def test_without_aimet_the_step_is_skipped_and_names_the_extra(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(equalize_module, "aimet_missing", lambda: True)
    context = _context(tmp_path)
    kept, report = run_ladder(context)
    steps = {s.step: s for s in report.steps}
    assert list(steps) == ["ptq", "calibration", "equalize"]
    assert steps["equalize"].status == "skipped"
    assert "AIMET-ONNX is not installed" in steps["equalize"].note
    assert "pip install 'edgepipe[aimet]'" in steps["equalize"].note
    assert report.final_step in ("ptq", "calibration") and kept  # the ladder goes on without it
    assert context.floats["onnx"] == tmp_path / "model.onnx"


def test_aimet_missing_finds_the_package_without_importing_it() -> None:
    import importlib.util
    import sys

    assert equalization.aimet_missing() == (importlib.util.find_spec("aimet_onnx") is None)
    assert "aimet_onnx" not in sys.modules or not equalization.aimet_missing()


@needs_aimet
def test_cle_keeps_the_function_and_evens_the_channel_ranges(tmp_path: Path) -> None:
    source = conv_relu_conv(tmp_path / "model.onnx")
    result = equalization.equalize_onnx(source, tmp_path / "equalized.onnx")
    assert result.rescaled == ("conv1", "conv2") and result.layers == 2
    assert "rescaled 2 of 2 weight layers" in result.summary
    x = image_batches(6, 16, 16, 5)
    before, after = _outputs(source, x), _outputs(result.path, x)
    np.testing.assert_allclose(after, before, rtol=1e-4, atol=1e-4 * float(np.abs(before).max()))
    assert _channel_spread(source, "w1") > 1000
    assert _channel_spread(result.path, "w1") < _channel_spread(source, "w1") / 10


@needs_aimet
def test_with_aimet_the_step_scores_the_equalized_model(tmp_path: Path) -> None:
    context = _context(tmp_path)
    kept, report = run_ladder(context)
    step = {s.step: s for s in report.steps}["equalize"]
    assert step.status in ("met", "missed"), step.note
    assert "cross-layer equalization rescaled 2 of 2 weight layers" in step.note
    before, after = step.candidates  # step (b)'s setting on the float model, then on the equalized one
    assert before.recipe.startswith("minmax/per-tensor") and after.recipe == f"equalized, {before.recipe}"
    assert after.sqnr_db is not None and before.sqnr_db is not None
    if "kept on the" in step.note:  # ranked above step (b)'s setting: later steps quantize the equalized model
        assert step.selection["onnx"].min_sqnr_db >= before.sqnr_db
        assert context.floats["onnx"] == tmp_path / "ladder" / "equalize" / "model_equalized.onnx"
    else:
        assert "not kept" in step.note and context.floats["onnx"] == tmp_path / "model.onnx"
    assert kept


#: A fresh process (AIMET configures logging on its first import only): a handler that closes its stream on close,
#: as absl's does (TensorFlow's), then the first equalization.
_FIRST_IMPORT = textwrap.dedent("""
    import io, logging, sys
    from pathlib import Path
    from edgepipe.quantize.equalization import equalize_onnx
    from tests.models.onnx_exports import conv_relu_conv

    class ClosesItsStream(logging.StreamHandler):
        def close(self):
            self.stream.close()
            super().close()

    handler = ClosesItsStream(io.StringIO())
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)
    folder = Path(sys.argv[1])
    equalize_onnx(conv_relu_conv(folder / "model.onnx"), folder / "equalized.onnx")
    logging.getLogger("edgepipe.after").warning("still heard")
    quant = logging.getLogger("Quant")
    print(handler.stream.closed, "still heard" in handler.stream.getvalue(), quant.handlers, quant.propagate)
""")


@needs_aimet
def test_the_first_equalization_leaves_the_applications_logging_alone(tmp_path: Path) -> None:
    """AIMET's import-time ``dictConfig`` closed every existing handler: absl's closed pytest's capture file with it
    and every later test on that worker failed. Its own loggers were bound to the ``sys.stdout`` of that moment."""
    done = subprocess.run([sys.executable, "-c", _FIRST_IMPORT, str(tmp_path)], capture_output=True, text=True,
                          cwd=Path(__file__).parents[3], check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[-2] == "False True [] True"
