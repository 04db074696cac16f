"""What a ``.npy``/``.npz`` file declares, read from its headers alone, before any array is allocated.

numpy allocates an array of the header's shape before reading its bytes, so a
20-byte file declaring ``(10**12,)`` floats would exhaust memory. Every header
is checked here against the file's real size, the size limits and pickle
(object dtypes) first.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import IO

import numpy as np

from edgepipe.errors import DataError
from edgepipe.limits import check_data_total, check_declared_tensor

_PICKLE_FIX = "Save plain numeric arrays with numpy.savez"
_NPY_FIX = "Write it with numpy.savez"


def _header(handle: IO[bytes], name: str, path: Path) -> tuple[tuple[int, ...], np.dtype]:
    fmt = np.lib.format
    try:
        version = fmt.read_magic(handle)
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, _, dtype = read(handle)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        raise DataError(f"array '{name}' has a corrupt .npy header ({exc})", path=path, fix=_NPY_FIX) from None
    if dtype.hasobject:
        raise DataError(f"array '{name}' holds pickled Python objects, which edgepipe never loads", path=path,
                        fix=_PICKLE_FIX)
    return tuple(shape), dtype


def _check_member(name: str, shape: tuple[int, ...], dtype: np.dtype, stored: int, path: Path) -> int:
    """The array's declared bytes; refused above the limits or when the file cannot hold them."""
    nbytes = check_declared_tensor(name, shape, dtype.itemsize, path)
    if nbytes > stored:
        raise DataError(f"array '{name}' declares shape {shape} ({nbytes} bytes) but the file holds only "
                        f"{stored} bytes", path=path, fix="The file is truncated: write it again with numpy.savez")
    return nbytes


def check_declared_arrays(path: Path, is_npy: bool) -> None:
    """Refuse ``path`` when any array it declares is pickled, too large, or larger than the file itself."""
    if is_npy:
        with path.open("rb") as handle:
            shape, dtype = _header(handle, "input", path)
            stored = path.stat().st_size - handle.tell()
        check_data_total(_check_member("input", shape, dtype, stored, path), path)
        return
    total = 0
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                name = info.filename.removesuffix(".npy")
                with archive.open(info) as handle:
                    shape, dtype = _header(handle, name, path)
                    stored = info.file_size - handle.tell()
                total += _check_member(name, shape, dtype, stored, path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, RuntimeError, ValueError) as exc:
        raise DataError(f"not a readable .npz file ({exc})", path=path, fix=_NPY_FIX) from None
    check_data_total(total, path)
