"""Model factories the tests name as ``python:tests.torch.torch_factories:<name>`` (the user's-repository case)."""

from __future__ import annotations

import torch
from torch import nn


class SmallCNN(nn.Module):
    """NHWC ``(1, 8, 8, 1)`` digits in → 10 logits: conv, ReLU, global average pool, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.head = nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.conv(x.permute(0, 3, 1, 2))).mean(dim=(2, 3)))


class Svd(nn.Module):
    """Singular values of each 8x8 image: torch.export traces it, the ONNX exporter has no translation for SVD."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.svd(x[..., 0])[1]


class DataDependent(nn.Module):
    """Python control flow on a tensor's value: torch.export cannot trace it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x * 2
        return x


def _example() -> torch.Tensor:
    return torch.zeros(1, 8, 8, 1)


def small_cnn() -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    return SmallCNN(), _example()


def svd() -> tuple[nn.Module, torch.Tensor]:
    return Svd(), _example()


def data_dependent() -> tuple[nn.Module, torch.Tensor]:
    return DataDependent(), _example()


def not_a_model() -> str:
    return "not a module"
