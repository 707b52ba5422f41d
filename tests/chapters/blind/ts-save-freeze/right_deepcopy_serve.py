"""RIGHT: freezes a deep copy of the model put in eval mode (the caller's module is never switched), saves with the .save() method, and on loading calls .eval() and optimizes with other_methods=["labels"] so labels() survives the re-freeze that .eval() triggers."""

import copy

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
        self.block2 = nn.Sequential(
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1)
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(32, classes))
        self.aux = nn.Sequential(
            nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, classes)
        )
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
    """Compile `model` to TorchScript and save it to `path` for `purpose` ("serve" or "finetune")."""
    if purpose == "finetune":
        torch.jit.script(model).save(path)
    elif purpose == "serve":
        # Work on a private copy: the caller's model is never switched or touched.
        servable = copy.deepcopy(model).eval()
        frozen = torch.jit.freeze(torch.jit.script(servable), preserved_attrs=["labels"])
        frozen.save(path)
    else:
        raise ValueError(f"unknown purpose {purpose!r}; expected 'serve' or 'finetune'")


def load_for_serving(path: str) -> torch.jit.ScriptModule:
    """Load a "serve" file on the CPU, optimized for CPU inference, labels() still working."""
    loaded = torch.jit.load(path, map_location=torch.device("cpu"))
    loaded.eval()
    return torch.jit.optimize_for_inference(loaded, other_methods=["labels"])


if __name__ == "__main__":
    import os

    model = ServeNet()
    save_for(model, "serve.pt", "serve")
    save_for(model, "finetune.pt", "finetune")
    print({p: os.path.getsize(p) for p in ("serve.pt", "finetune.pt")})
    fast = load_for_serving("serve.pt")
    print(fast.labels()[:3], fast.graph)  # no batch_norm, no aux head
