"""WRONG: dispatches through a dict, so an unknown purpose raises KeyError instead of "Any other purpose raises ValueError", and " Serve " or "FINETUNE" are accepted as if they were valid purposes."""

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


def _save_serve(model: nn.Module, path: str) -> None:
    scripted = torch.jit.script(model)
    scripted.eval()
    torch.jit.save(torch.jit.freeze(scripted, preserved_attrs=["labels"]), path)


def _save_finetune(model: nn.Module, path: str) -> None:
    torch.jit.save(torch.jit.script(model), path)


_SAVERS = {"serve": _save_serve, "finetune": _save_finetune}


def save_for(model: nn.Module, path: str, purpose: str) -> None:
    """Compile `model` to TorchScript and save it to `path` for `purpose` ("serve" or "finetune")."""
    _SAVERS[purpose.strip().lower()](model, path)


def load_for_serving(path: str) -> torch.jit.ScriptModule:
    """Load a "serve" file on the CPU, optimized for CPU inference, labels() still working."""
    loaded = torch.jit.load(path, map_location="cpu")
    return torch.jit.optimize_for_inference(loaded)


if __name__ == "__main__":
    import os

    model = ServeNet()
    save_for(model, "serve.pt", "serve")
    save_for(model, "finetune.pt", "finetune")
    print({p: os.path.getsize(p) for p in ("serve.pt", "finetune.pt")})
    fast = load_for_serving("serve.pt")
    print(fast.labels()[:3], fast.graph)  # no batch_norm, no aux head
