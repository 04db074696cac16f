"""The conversion-reach page is what its committed result files give, and its counts separate faithful artifacts
from ones that merely came out."""

from __future__ import annotations

from benchmarks import export_routes


def test_the_page_is_rendered_from_the_committed_json() -> None:
    """The page is what the committed result files give, and there is no page without them."""
    runs = export_routes.committed_runs()
    if not runs:
        assert not export_routes.DOC.exists(), "a conversion page without its result file"
        return
    assert export_routes.DOC.read_text(encoding="utf-8") == export_routes.render(runs)
    assert next(iter(runs)) == "main" or "main" not in runs


def test_a_converted_artifact_the_float_check_refused_is_not_faithful() -> None:
    rows = [{"outcome": "faithful"}, {"outcome": "unfaithful"}, {"outcome": "failed"}, {"outcome": "timeout"}]
    assert export_routes.share(rows) == (1, 2, 4)


def test_the_page_names_each_runs_commit_and_counts_per_direction() -> None:
    provenance = {"commit": "abc1234", "dirty": False, "started": "s", "finished": "f", "cpu": "cpu", "cpus": 2,
                  "tools": {"onnx2tf": "1.28.8"}}
    rows = [{"model": "a", "source": "onnx", "outcome": "faithful", "route": "onnx2tf", "cosine": 1.0, "wall_s": 3},
            {"model": "b", "source": "onnx", "outcome": "failed", "error": "x | y", "wall_s": 4},
            {"model": "c", "source": "tflite", "outcome": "faithful", "route": "tf2onnx", "wall_s": 5}]
    page = export_routes.render({"main": {"provenance": provenance, "rows": rows}})
    assert "| main | `abc1234` | 1.28.8 |" in page
    assert "**1/2 faithful (50.0 %)**, 1/2 converted | **1/1 faithful (100.0 %)**, 1/1 converted |" in page
    assert "| `b` | onnx | failed, 4 s: x / y |" in page


def test_a_source_edgepipe_refuses_to_load_is_unloadable_not_crashed(tmp_path) -> None:  # noqa: ANN001
    """A TFLite whose custom op LiteRT lacks ends in edgepipe's own ModelLoadError, a clear refusal: the row says
    "unloadable" with that message (it once read "crashed", as if the harness had broken)."""
    from tests.models.formats import transpose_conv_bias_tflite

    source = transpose_conv_bias_tflite(tmp_path / "made.tflite").read_bytes()
    (tmp_path / "unknown.tflite").write_bytes(source.replace(b"Convolution2DTransposeBias",
                                                             b"NoSuchCustomOpInLiteRT0000"))
    (tmp_path / "edgepipe.toml").write_text('model = "unknown.tflite"\noutput = "build"\n')
    row = export_routes.convert_one(tmp_path / "edgepipe.toml", [])
    assert row["outcome"] == "unloadable" and "unknown.tflite" in row["error"] and row["route"] is None
