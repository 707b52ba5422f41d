"""RIGHT: scripts the caller's model while it is briefly in eval mode and restores every submodule's own training flag afterwards (try/finally), then freezes the scripted copy; validation first, set-membership test."""

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
    if purpose not in {"serve", "finetune"}:
        raise ValueError(f"purpose must be 'serve' or 'finetune', got {purpose!r}")
    if purpose == "finetune":
        torch.jit.save(torch.jit.script(model), path)
        return
    modes = {name: m.training for name, m in model.named_modules()}
    model.eval()
    try:
        scripted = torch.jit.script(model)
    finally:
        for name, m in model.named_modules():  # every submodule back to exactly its own mode
            m.training = modes[name]
    scripted.eval()
    frozen = torch.jit.freeze(scripted, preserved_attrs=["labels"])
    torch.jit.save(frozen, path)


def load_for_serving(path: str) -> torch.jit.ScriptModule:
    """Load a "serve" file on the CPU, optimized for CPU inference, labels() still working."""
    return torch.jit.optimize_for_inference(torch.jit.load(path, map_location="cpu"))


if __name__ == "__main__":
    import os

    model = ServeNet()
    save_for(model, "serve.pt", "serve")
    save_for(model, "finetune.pt", "finetune")
    print({p: os.path.getsize(p) for p in ("serve.pt", "finetune.pt")})
    fast = load_for_serving("serve.pt")
    print(fast.labels()[:3], fast.graph)  # no batch_norm, no aux head
