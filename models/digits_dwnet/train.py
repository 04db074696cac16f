"""Train the PyTorch reference model ``digits_dwnet`` on scikit-learn's digits and save it as a torch.export archive.

Deterministic (seed 0, deterministic algorithms, one thread): ``python models/digits_dwnet/train.py``
writes ``models/digits_dwnet/digits_dwnet.pt2`` from the splits in ``calib/digits/`` (written by
``models/digits_cnn/make_data.py``). The architecture is a narrow depthwise-separable network without
batch normalization and with SiLU activations, see MODEL.md for why that makes int8 PTQ lose accuracy.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch
from torch import nn

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "calib" / "digits"
OUT = HERE / "digits_dwnet.pt2"
EPOCHS = 60
BATCH = 32
LEARNING_RATE = 3e-3


class DigitsDWNet(nn.Module):
    """NHWC ``(N, 8, 8, 1)`` in [0, 1] → 10 logits; depthwise-separable blocks, SiLU, no normalization."""

    def __init__(self, width: int = 12):
        super().__init__()
        self.stem = nn.Conv2d(1, width, 3, padding=1)
        self.dw1 = nn.Conv2d(width, width, 3, padding=1, groups=width)
        self.pw1 = nn.Conv2d(width, 2 * width, 1)
        self.dw2 = nn.Conv2d(2 * width, 2 * width, 3, stride=2, padding=1, groups=2 * width)
        self.pw2 = nn.Conv2d(2 * width, 2 * width, 1)
        self.head = nn.Linear(2 * width, 10)
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 3, 1, 2)
        x = self.act(self.stem(x))
        x = self.act(self.pw1(self.act(self.dw1(x))))
        x = self.act(self.pw2(self.act(self.dw2(x))))
        return self.head(x.mean(dim=(2, 3)))


def load_split(name: str) -> tuple[torch.Tensor, torch.Tensor]:
    with np.load(DATA / f"{name}.npz", allow_pickle=False) as data:
        return torch.from_numpy(data["input"]), torch.from_numpy(data["labels"])


def make_model() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """Train from scratch and return (model, example input): also usable as ``python:`` factory."""
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    x, y = load_split("train")
    model = DigitsDWNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    generator = torch.Generator().manual_seed(0)
    for _ in range(EPOCHS):
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), BATCH):
            batch = order[start:start + BATCH]
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x[batch]), y[batch]).backward()
            optimizer.step()
    return model.eval(), (x[:1],)


def main() -> None:
    model, example = make_model()
    xe, ye = load_split("evaluation")
    with torch.no_grad():
        accuracy = float((model(xe).argmax(1) == ye).float().mean())
    torch.export.save(torch.export.export(model, example), OUT)
    digest = hashlib.sha256(OUT.read_bytes()).hexdigest()
    print(f"{OUT.name}: float top-1 {accuracy:.4f} on {len(ye)} evaluation images, "
          f"{sum(p.numel() for p in model.parameters())} parameters, {OUT.stat().st_size} bytes, sha256 {digest}")


if __name__ == "__main__":
    main()
