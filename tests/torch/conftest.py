"""PyTorch tests run with the real torch CPU wheel (marker ``torch``); one intra-op thread keeps them steady on a
shared 2-core runner."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

torch.set_num_threads(1)

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder runs the real torch wheel: marker ``torch``."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.torch)
