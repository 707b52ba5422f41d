"""Exercise: save a scripted model, load it back, freeze it and optimize it for inference.

A TorchScript file holds the compiled code and the weights: loading it needs neither this
Python class nor Python at all (C++ loads it with torch::jit::load).
"""

import torch
from torch import nn


class SmallConvNet(nn.Module):
    """Given: do not edit. Conv + BatchNorm blocks and a Dropout: layers that behave
    differently in training and evaluation mode."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(32, classes))

    def forward(self, x):
        return self.head(self.features(x))


def save_scripted(model: nn.Module, path: str) -> None:
    """Compile `model` to TorchScript and save it to `path`."""
    # TODO: a file that torch.jit.load (and C++) can read without this Python class. Watch
    #       out: two save functions write files that look alike, and only one is TorchScript.
    #       Leave the caller's model as it was (including its training/eval mode).
    raise NotImplementedError("TODO: script and save")


def load_for_inference(path: str) -> torch.jit.ScriptModule:
    """Load the TorchScript file at `path` on the CPU, ready for fast inference."""
    # TODO: load it onto the CPU, whatever device it was saved from.
    # TODO: ready for inference means: inference behaviour (think BatchNorm and Dropout), weights
    #       turned into constants so BatchNorm can fold away, and the CPU-specific optimizations.
    #       Watch out: the file remembers the mode the model was saved in.
    raise NotImplementedError("TODO: load, freeze and optimize")


if __name__ == "__main__":
    model = SmallConvNet()
    save_scripted(model, "convnet.pt")
    fast = load_for_inference("convnet.pt")
    print(fast.graph)  # no batch_norm left: folded into the convolutions
    x = torch.randn(2, 3, 32, 32)
    print((fast(x) - model.eval()(x)).abs().max())
