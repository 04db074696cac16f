"""Train the PyTorch reference model ``digits_vit`` on scikit-learn's digits and save it as a torch.export archive.

Deterministic (seed 0, deterministic algorithms, one thread): ``python models/digits_vit/train.py``
writes ``models/digits_vit/digits_vit.pt2`` from the splits in ``calib/digits/`` (written by
``models/digits_cnn/make_data.py``). The architecture is a one-block vision transformer (2x2 patches,
LayerNorm, softmax attention, GELU MLP); MODEL.md says why int8 PTQ loses accuracy on it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch
from torch import nn

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "calib" / "digits"
OUT = HERE / "digits_vit.pt2"
EPOCHS = 60
BATCH = 32
LEARNING_RATE = 3e-3


class DigitsViT(nn.Module):
    """NHWC ``(N, 8, 8, 1)`` in [0, 1] → 10 logits: 16 tokens of 2x2 pixels, one pre-norm transformer block."""

    def __init__(self, dim: int = 16, heads: int = 2):
        super().__init__()
        self.embed = nn.Linear(4, dim)
        self.position = nn.Parameter(torch.zeros(16, dim))
        self.norm1 = nn.LayerNorm(dim)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.norm3 = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        patches = x.reshape(n, 4, 2, 4, 2).permute(0, 1, 3, 2, 4).reshape(n, 16, 4)
        h = self.embed(patches) + self.position
        a = self.norm1(h)
        h = h + self.attention(a, a, a, need_weights=False)[0]
        h = h + self.mlp(self.norm2(h))
        return self.head(self.norm3(h).mean(dim=1))


def load_split(name: str) -> tuple[torch.Tensor, torch.Tensor]:
    with np.load(DATA / f"{name}.npz", allow_pickle=False) as data:
        return torch.from_numpy(data["input"]), torch.from_numpy(data["labels"])


def make_model() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """Train from scratch and return (model, example input): also usable as ``python:`` factory."""
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    x, y = load_split("train")
    model = DigitsViT()
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
