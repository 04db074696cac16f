"""A starting ``edgepipe.toml`` for a model a user brings: its inputs read, their kind guessed, dims to fix named.

``describe_inputs`` reads an ONNX or TFLite model's inputs as declared (named and ``-1``
dimensions kept, not fixed); ``render_config`` writes a commented config from them: the
shapes to put in ``input_shapes`` (dynamic dims replaced by a suggestion, one value per
shared dimension name), the data layout each input wants and a ``[preprocess]`` table for
image and audio inputs. Every guess is a comment the user reads and edits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgepipe.errors import ModelLoadError
from edgepipe.load import detect_format, load_model
from edgepipe.metrics.task.kinds import guess_from_shape

#: Suggested sizes for dynamic dimensions, by the kind of input.
IMAGE_SIDE = 224
AUDIO_SAMPLES = 16000
SEQUENCE = 128
#: The smallest height/width an image input has (8x8 digits), and the shortest audio window (25 ms at 16 kHz).
MIN_IMAGE_SIDE = 8
MIN_AUDIO_SAMPLES = 400


@dataclass(frozen=True)
class InputInfo:
    """One model input as declared: ``dims`` hold ints, or a name / ``None`` for a dynamic dimension."""

    name: str
    dims: tuple[int | str | None, ...]
    dtype: str

    @property
    def dynamic(self) -> bool:
        return any(not isinstance(d, int) or d <= 0 for d in self.dims)

    def kind(self) -> str:
        """'image-NCHW', 'image-NHWC', 'audio', 'tokens', 'state' or 'tensor' (a guess from rank, sizes, dtype)."""
        dims = self.dims
        if np.issubdtype(np.dtype(self.dtype), np.integer):
            return "tokens" if len(dims) == 2 else "tensor"
        if len(dims) == 4 and dims[1] in (1, 3, 4) and dims[3] not in (1, 3, 4) and _spatial(dims[2:4]):
            return "image-NCHW"
        if len(dims) == 4 and dims[3] in (1, 3, 4) and _spatial(dims[1:3]):
            return "image-NHWC"
        if len(dims) == 2 and _samples(dims[1]):
            return "audio"
        if len(dims) == 3 and ((dims[2] == 1 and _samples(dims[1])) or (dims[1] == 1 and _samples(dims[2]))):
            return "audio"  # mono with a channel axis: Keras (N, samples, 1) or PyTorch (N, 1, samples)
        if len(dims) == 3 and isinstance(dims[0], int) and dims[0] > 1:
            return "state"
        return "tensor"


def _spatial(dims: tuple[int | str | None, ...]) -> bool:
    """True when both dims can be an image's height and width: dynamic, or at least MIN_IMAGE_SIDE pixels.

    A (1, 1, 1, 64) float input is an attention mask, not a 1x64-pixel picture.
    """
    return all(not isinstance(d, int) or d >= MIN_IMAGE_SIDE for d in dims)


def _samples(dim: int | str | None) -> bool:
    """True when ``dim`` can be a window of audio samples: dynamic, or at least MIN_AUDIO_SAMPLES long."""
    return not isinstance(dim, int) or dim >= MIN_AUDIO_SAMPLES


def _onnx_dim(dim: object) -> int | str | None:
    if dim.HasField("dim_value") and dim.dim_value > 0:  # type: ignore[attr-defined]
        return int(dim.dim_value)  # type: ignore[attr-defined]
    if dim.HasField("dim_value"):  # type: ignore[attr-defined]
        return None  # -1 or 0: dynamic without a name
    name = dim.dim_param  # type: ignore[attr-defined]
    return None if name in ("", "?") else name  # PaddlePaddle writes "?" for unrelated dims: not a shared name


def _onnx_inputs(path: Path) -> list[InputInfo]:
    import onnx  # heavy optional dependency

    try:
        model = onnx.load(str(path), load_external_data=False)
    except (OSError, ValueError, onnx.onnx_cpp2py_export.checker.ValidationError) as exc:
        raise ModelLoadError(f"not a readable ONNX model ({exc})", path=path, fix="Check the file") from None
    initializers = {init.name for init in model.graph.initializer}
    out = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type).name
        out.append(InputInfo(value.name, tuple(_onnx_dim(d) for d in tensor.shape.dim), dtype))
    return out


def _tflite_inputs(path: Path) -> list[InputInfo]:
    from ai_edge_litert.interpreter import Interpreter  # heavy optional dependency

    try:
        details = Interpreter(model_path=str(path)).get_input_details()
    except (ValueError, RuntimeError) as exc:
        raise ModelLoadError(f"not a readable TFLite model ({exc})", path=path, fix="Check the file") from None
    return [InputInfo(d["name"], tuple(int(s) if s > 0 else None for s in d["shape_signature"]),
                      np.dtype(d["dtype"]).name) for d in details]


def describe_outputs(path: Path, inputs: list[InputInfo]) -> list[tuple[str, tuple[int | None, ...]]]:
    """The model's outputs, (name, dims) with None for a dynamic dimension; an ONNX model's with its dynamic input
    dimensions at the suggested sizes (so that its output sizes follow)."""
    shapes = suggested_shapes(inputs) if detect_format(path) == "onnx" else {}
    return [(s.name, tuple(s.shape)) for s in load_model(path, input_shapes=shapes or None).signature.outputs]


def describe_inputs(path: Path) -> list[InputInfo]:
    """The model's inputs as it declares them (ONNX, TFLite; Keras/SavedModel through edgepipe's loader)."""
    fmt = detect_format(path)
    if fmt == "onnx":
        return _onnx_inputs(path)
    if fmt == "tflite":
        return _tflite_inputs(path)
    return [InputInfo(s.name, tuple(s.shape), np.dtype(s.dtype).name) for s in load_model(path).signature.inputs]


def _suggest(info: InputInfo, position: int) -> int:
    """A size for the dynamic dimension at ``position`` of ``info``."""
    kind = info.kind()
    if position == 0:
        return 1
    if kind.startswith("image"):
        return IMAGE_SIDE
    if kind == "audio":
        return AUDIO_SAMPLES
    if kind == "tokens":
        return SEQUENCE
    return 1


def suggested_shapes(inputs: list[InputInfo]) -> dict[str, list[int]]:
    """``input_shapes`` for every input with a dynamic dim; a dim name shared by several dims gets one size."""
    by_name: dict[str, int] = {}
    shapes = {}
    for info in inputs:
        if not info.dynamic:
            continue
        shape = []
        for position, dim in enumerate(info.dims):
            if isinstance(dim, int) and dim > 0:
                shape.append(dim)
            elif isinstance(dim, str):
                shape.append(by_name.setdefault(dim, _suggest(info, position)))
            else:
                shape.append(_suggest(info, position))
        shapes[info.name] = shape
    return shapes


def _dims_text(info: InputInfo) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in info.dims) + "]"


def _key(name: str) -> str:
    return name if name.replace("_", "").replace("-", "").isalnum() else '"' + name.replace('"', '\\"') + '"'


def _relative(model: Path, config: Path) -> str:
    try:
        return Path(os.path.relpath(model.resolve(), config.resolve().parent)).as_posix()
    except ValueError:  # another drive on Windows
        return model.resolve().as_posix()


_KIND_NOTES = {
    "image-NCHW": "an image batch, channels first: give a folder of images (or class sub-folders)",
    "image-NHWC": "an image batch, channels last: give a folder of images (or class sub-folders)",
    "audio": "audio samples: give a folder of .wav files (set [preprocess] sample_rate), or a .npz",
    "tokens": "integer ids (tokens, bytes): give a .npz with one array per input",
    "state": "looks like a recurrent state: give a .npz with one array per input",
    "tensor": "give a .npz with one array per input, named like the input",
}


def _preprocess_lines(inputs: list[InputInfo], shapes: dict[str, list[int]]) -> list[str]:
    kinds = {info.kind() for info in inputs}
    lines: list[str] = []
    image = next((i for i in inputs if i.kind().startswith("image")), None)
    if image is not None and len(inputs) == 1:
        dims = shapes.get(image.name, list(image.dims))
        nchw = image.kind() == "image-NCHW"
        size = dims[2:4] if nchw else dims[1:3]
        lines += ["", "# How image files become the input: resize, pixel/255, (x - mean) / std, layout.",
                  "[preprocess]", f"layout = \"{'NCHW' if nchw else 'NHWC'}\"   # guessed from the channel dim",
                  f"size = [{size[0]}, {size[1]}]   # (height, width) in pixels",
                  "mean = [0.0]   # e.g. [0.485, 0.456, 0.406] for ImageNet-trained models, [0.5] for [-1, 1]",
                  "std = [1.0]    # e.g. [0.229, 0.224, 0.225] (ImageNet), [0.5] for [-1, 1]",
                  "# limit = 200  # at most this many files"]
    elif "audio" in kinds and len(inputs) == 1:
        lines += ["", "# .wav files are mixed to mono, scaled to [-1, 1], resampled, cut into input-sized windows.",
                  "[preprocess]", f"sample_rate = {AUDIO_SAMPLES}   # Hz the model was trained at: check it"]
    return lines


def _task_lines(outputs: list[tuple[str, tuple[int | None, ...]]]) -> list[str]:
    """The ``[accuracy.task]`` table proposed from the outputs' shapes (commented: ``auto`` decides on the data)."""
    guesses = [(name, guess_from_shape(shape, name)) for name, shape in outputs]
    known = [(name, g) for name, g in guesses if g.kind != "unknown"]
    if not known:
        return []
    name, guess = known[0]
    lines = ["", "# The int8 model is also judged at task level against the float one (auto: guessed from the",
             f"# outputs' values in the build). From the shapes, {name} looks like {guess.kind}:", f"# {guess.reason}.",
             "# Set the kind and decoding parameters to be sure (docs/guide/accuracy.md):",
             "# [accuracy.task]", f'# kind = "{guess.kind}"', f'# outputs = ["{name}"]']
    return lines + [f"# params = {{ {', '.join(f'{k} = {v!r}' for k, v in guess.params.items())} }}".replace("'", '"')
                    ] if guess.params else lines


def render_config(model: Path, config_path: Path, inputs: list[InputInfo],
                  outputs: list[tuple[str, tuple[int | None, ...]]] | None = None) -> str:
    """The commented ``edgepipe.toml`` text for ``model``, to be written at ``config_path``."""
    shapes = suggested_shapes(inputs)
    lines = [f"# edgepipe.toml for {model.name}, written by `edgepipe init`: read every comment, edit, then run",
             f"#   edgepipe build --config {config_path.as_posix()}",
             "#", "# Model inputs as declared (? = dynamic; a name = a dynamic dimension shared by that name):"]
    for info in inputs:
        lines.append(f"#   {info.name}  {_dims_text(info)}  {info.dtype}  -> {info.kind()}: {_KIND_NOTES[info.kind()]}")
    lines += ["", f"model = \"{_relative(model, config_path)}\"", 'targets = ["host-cpu"]   # `edgepipe targets list`',
              'output = "build"']
    if shapes and detect_format(model) != "onnx":  # the loaders of the other formats take no input_shapes
        lines += ["", f"# Dynamic dimensions ({', '.join(shapes)}): input_shapes applies to ONNX models only; this "
                      "model runs with batch size 1", "# and the other sizes it declares (export it with the sizes you "
                      "feed to change them)."]
    elif shapes:
        lines += ["", "# Dynamic dimensions must be fixed for int8 and for NPU compilers. These sizes are guesses:",
                  "# use the size your application feeds (dims sharing a name share a size)."]
        lines.append("input_shapes = { " + ", ".join(f"{_key(n)} = {s}" for n, s in shapes.items()) + " }")
    folder_ok = len(inputs) == 1 and inputs[0].kind() in ("image-NCHW", "image-NHWC", "audio")
    lines += ["", "[data]",
              "# Calibration: representative inputs, no labels needed (100-500 samples is plenty).",
              f"calibration = \"{'calib' if folder_ok else 'calibration.npz'}\"",
              "# Evaluation: held-out inputs. Labels make the gate top-1 accuracy: one sub-folder per class,",
              "# a labels.csv (file,label) beside the files, or a 'labels' array in the .npz. Without labels the",
              "# gate compares int8 outputs with float ones (cosine per output, see [accuracy]).",
              f"# evaluation = \"{'eval' if folder_ok else 'evaluation.npz'}\""]
    lines += _preprocess_lines(inputs, shapes)
    lines += ["", "[accuracy]", "max_drop_points = 1.0   # with labels: largest float->int8 top-1 drop (points)",
              "min_cosine = 0.99       # without labels: smallest cosine of each int8 output with the float one",
              "min_sqnr_db = 15.0      # ... and SQNR of each output (dB), 10 dB for each part of very different range"]
    lines += _task_lines(outputs or [])
    return "\n".join(lines) + "\n"
