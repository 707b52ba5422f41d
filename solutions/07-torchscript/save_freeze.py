"""Reference solution: freeze for serving (eval mode, labels preserved), not for fine-tuning;
optimize for inference after loading.

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
    if purpose not in ("serve", "finetune"):
        raise ValueError(f"purpose must be 'serve' or 'finetune', not {purpose!r}")
    scripted = torch.jit.script(model)  # a separate module: switching it leaves the caller's alone
    if purpose == "finetune":
        # Trainable means parameters, the training branch and its head: save it as it is.
        torch.jit.save(scripted, path)  # key
        return
    scripted.eval()  # key
    # Freezing in eval mode folds BatchNorm into the convs, drops Dropout and the training-only
    # aux head (most of the bytes), and every method but forward unless preserved.
    frozen = torch.jit.freeze(scripted, preserved_attrs=["labels"])  # key
    # Not optimize_for_inference here: its graph saves, then fails in torch.jit.load.
    torch.jit.save(frozen, path)


def load_for_serving(path: str) -> torch.jit.ScriptModule:
    """Load a "serve" file on the CPU and return it ready for fast CPU inference, labels()
    still working."""
    loaded = torch.jit.load(path, map_location="cpu")  # key
    return torch.jit.optimize_for_inference(loaded)  # key


if __name__ == "__main__":
    import os

    model = ServeNet()
    save_for(model, "serve.pt", "serve")
    save_for(model, "finetune.pt", "finetune")
    print({p: os.path.getsize(p) for p in ("serve.pt", "finetune.pt")})
    fast = load_for_serving("serve.pt")
    print(fast.labels()[:3], fast.graph)  # no batch_norm, no aux head
