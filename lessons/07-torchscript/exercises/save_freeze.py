"""Exercise: one model, two TorchScript files: one to serve, one to keep training.

A TorchScript file holds the compiled code and the weights: loading it needs neither this
Python class nor Python at all (C++ loads it with torch::jit::load). What goes INTO the file is
a decision: a frozen module is smaller and faster, and can no longer be trained.
"""

import torch
from torch import nn


class ServeNet(nn.Module):
    """Given: do not edit. Two Conv + BatchNorm blocks and a Dropout (layers that behave
    differently in training and evaluation), an auxiliary head that only training uses (deep
    supervision: it adds a loss term on the first block's features), and the class names, read
    by the server through the exported method labels()."""

    class_names: list[str]  # TorchScript reads an attribute's type from the class body

    def __init__(self, classes: int = 10):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.block2 = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                                    nn.AdaptiveAvgPool2d(1))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(32, classes))
        self.aux = nn.Sequential(nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(256, 256), nn.ReLU(),
                                 nn.Linear(256, classes))
        self.class_names = [f"class_{i}" for i in range(classes)]

    def forward(self, x):
        h = self.block1(x)
        out = self.head(self.block2(h))
        if self.training:
            return out + 0.3 * self.aux(h)  # the auxiliary head's term, in training only
        return out

    @torch.jit.export
    def labels(self) -> list[str]:
        return self.class_names


def save_for(model: nn.Module, path: str, purpose: str) -> None:
    """Compile `model` to TorchScript and save it to `path` for `purpose`:

    - "serve": a CPU inference server loads it with torch.jit.load and calls forward(x) and
      labels(). Target: the file at most half the size of the "finetune" file, nothing in it
      that inference never runs, outputs equal to the model in eval mode.
    - "finetune": a device loads it with torch.jit.load and keeps training it: every weight
      still trainable, training-mode behaviour (the auxiliary head) intact.

    Any other purpose raises ValueError."""
    # TODO: decide, per purpose, whether to freeze. Know what freezing keeps and drops: it
    #       needs evaluation mode, turns weights into constants and removes what forward()
    #       does not use in that mode, including other methods unless you ask to keep them.
    # TODO: the caller's model must come back as it was: same weights, still in training mode.
    # TODO: watch out: one of the inference optimizations saves without complaint and then
    #       cannot be loaded; keep it out of the file.
    raise NotImplementedError("TODO: save_for")


def load_for_serving(path: str) -> torch.jit.ScriptModule:
    """Load a "serve" file on the CPU and return it ready for fast CPU inference, labels()
    still working."""
    # TODO: load onto the CPU whatever device it was saved from, then apply the CPU-specific
    #       inference optimization that could not go into the file.
    raise NotImplementedError("TODO: load_for_serving")


if __name__ == "__main__":
    import os

    model = ServeNet()
    save_for(model, "serve.pt", "serve")
    save_for(model, "finetune.pt", "finetune")
    print({p: os.path.getsize(p) for p in ("serve.pt", "finetune.pt")})
    fast = load_for_serving("serve.pt")
    print(fast.labels()[:3], fast.graph)  # no batch_norm, no aux head
