"""PyTorch tests run with the real torch CPU wheel; one intra-op thread keeps them steady on a shared 2-core runner."""

from __future__ import annotations

import pytest
import torch

torch.set_num_threads(1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/torch/" in str(item.fspath):
            item.add_marker(pytest.mark.torch)
