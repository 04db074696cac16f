"""Train the PyTorch reference model ``digits_irnn`` on scikit-learn's digits and save it as a torch.export archive.

Deterministic (seed 0, deterministic algorithms, one thread): ``python models/digits_irnn/train.py``
writes ``models/digits_irnn/digits_irnn.pt2`` from the splits in ``calib/digits/`` (written by
``models/digits_cnn/make_data.py``). The network is an IRNN (Le, Jaitly & Hinton 2015, "A Simple Way to
Initialize Recurrent Networks of Rectified Linear Units"): a ReLU recurrent net whose recurrent weights
start as the identity, reading the 8x8 digit one pixel per step (64 steps). MODEL.md says why int8 PTQ
loses accuracy on it (``why_ptq.py`` measures it).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch
from torch import nn

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "calib" / "digits"
OUT = HERE / "digits_irnn.pt2"
HIDDEN = 128
EPOCHS = 200
BATCH = 32
LEARNING_RATE = 5e-4
#: Gradient-norm clipping, as recurrent nets are trained (Pascanu et al. 2013): BPTT through 64 steps explodes.
CLIP_NORM = 1.0


class DigitsIRNN(nn.Module):
    """NHWC ``(N, 8, 8, 1)`` in [0, 1] → 10 logits: ``h = relu(W_in x_t + W_rec h + b)`` over the 64 pixels."""

    def __init__(self, hidden: int = HIDDEN):
        super().__init__()
        self.hidden = hidden
        self.input = nn.Linear(1, hidden)
        self.recurrent = nn.Linear(hidden, hidden)
        with torch.no_grad():  # the IRNN initialisation: identity recurrence, zero bias
            self.recurrent.weight.copy_(torch.eye(hidden))
            self.recurrent.bias.zero_()
        self.head = nn.Linear(hidden, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pixels = x.reshape(x.shape[0], 64, 1)
        h = torch.zeros(x.shape[0], self.hidden)
        for t in range(64):
            h = torch.relu(self.input(pixels[:, t]) + self.recurrent(h))
        return self.head(h)


def load_split(name: str) -> tuple[torch.Tensor, torch.Tensor]:
    with np.load(DATA / f"{name}.npz", allow_pickle=False) as data:
        return torch.from_numpy(data["input"]), torch.from_numpy(data["labels"])


def make_model() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """Train from scratch and return (model, example input): also usable as ``python:`` factory."""
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    x, y = load_split("train")
    model = DigitsIRNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    generator = torch.Generator().manual_seed(0)
    for _ in range(EPOCHS):
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), BATCH):
            batch = order[start:start + BATCH]
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x[batch]), y[batch]).backward()
            nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)
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
