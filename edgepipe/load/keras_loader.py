"""Keras models: Keras 3 ``.keras`` archives and the legacy HDF5 files (``.h5``/``.hdf5``) Keras 2 saved, both
loaded by Keras 3 with ``safe_mode=True`` so no embedded code (Lambda) ever runs."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.errors import ModelLoadError
from edgepipe.load.rejections import raised_by
from edgepipe.tensors import Signature, TensorSpec

#: What Keras' loader raises for a file it cannot rebuild (read from keras/src/saving: ValueError and TypeError
#: for bad configs, KeyError/AttributeError for missing entries, OSError/zipfile errors for the archive).
KERAS_REJECTIONS = (ValueError, TypeError, KeyError, AttributeError, IndexError, OSError, NotImplementedError,
                    zipfile.BadZipFile, RuntimeError)


def _spec(tensor: Any) -> TensorSpec:
    return TensorSpec(name=tensor.name, shape=tuple(tensor.shape), dtype=np.dtype(tensor.dtype))


def _check_zip_total(path: Path) -> None:
    """Refuse a .keras archive whose members declare more than ``limits.max_model_mb`` (a zip bomb)."""
    from edgepipe.limits import active

    try:
        with zipfile.ZipFile(path) as archive:
            total = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ModelLoadError(f"not a readable zip archive ({exc})", path=path,
                             fix="Save the model again with model.save('name.keras')") from None
    if total > active().max_model_bytes:
        raise ModelLoadError(f"archive unpacks to {total} bytes, above limits.max_model_mb", path=path,
                             fix="Raise limits.max_model_mb in the config if the model really is that big")


#: The first bytes of every HDF5 file.
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _is_hdf5(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(len(HDF5_SIGNATURE)) == HDF5_SIGNATURE


def _check_hdf5_model(path: Path) -> None:
    """Refuse an HDF5 file that is not a whole Keras model: one that is not HDF5, or holds only weights."""
    if path.suffix not in (".h5", ".hdf5"):  # Keras picks its HDF5 reader by the lower-case suffix only
        raise ModelLoadError(f"Keras reads HDF5 models only from files named .h5 or .hdf5, not '{path.suffix}'",
                             path=path, fix=f"Rename the file to {path.stem}{path.suffix.lower()}")
    if not _is_hdf5(path):
        raise ModelLoadError("not an HDF5 file (a Keras .h5 model starts with the HDF5 signature)", path=path,
                             fix="Save the model with model.save('name.keras'), or give the file it was saved to")
    import h5py

    try:
        with h5py.File(path, "r") as handle:
            whole = "model_config" in handle.attrs
    except OSError as exc:
        raise ModelLoadError(f"not a readable HDF5 file ({exc})", path=path,
                             fix="Save the model again with model.save('name.keras')") from None
    if not whole:
        raise ModelLoadError("holds weights only, no model architecture (saved by save_weights)", path=path,
                             fix="Build the model in code, load these weights with model.load_weights(...), and "
                                 "save it whole with model.save('name.keras')")


def load(path: Path) -> tuple[Any, Signature]:
    """The ``keras.Model`` in ``path`` (a ``.keras`` archive or a legacy HDF5 file) and its signature."""
    legacy = path.suffix.lower() in (".h5", ".hdf5")
    if legacy:
        _check_hdf5_model(path)
    elif not zipfile.is_zipfile(path):
        raise ModelLoadError("not a Keras 3 model (a .keras file is a zip archive)", path=path,
                             fix="Save the model with model.save('name.keras')")
    from edgepipe.limits import check_model_file

    check_model_file(path)
    if not legacy:
        _check_zip_total(path)
    from edgepipe.frameworks import import_keras

    keras = import_keras()
    try:
        model = keras.saving.load_model(path, compile=False, safe_mode=True)
    except KERAS_REJECTIONS as exc:  # what Keras raises for a file it cannot rebuild; anything else is a bug
        if not raised_by(exc, ("keras", "h5py", "tensorflow", "google")):
            raise
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "Lambda" in reason and "safe_mode" in str(exc):
            raise ModelLoadError("holds a Lambda layer (embedded Python code); Keras safe_mode refused it and none "
                                 "of its code was run", path=path,
                                 fix="Replace the Lambda with built-in or registered custom layers and save again"
                                 ) from None
        error = ModelLoadError(f"cannot load Keras model ({reason})", path=path,
                               fix="Check the file is a whole Keras model without Lambda layers, or save it again "
                                   "with Keras 3 (model.save('name.keras'))")
        error.rejected_by = "keras"  # type: ignore[attr-defined]
        raise error from exc
    signature = Signature(inputs=tuple(_spec(t) for t in model.inputs),
                          outputs=tuple(_spec(t) for t in model.outputs))
    return model, signature

