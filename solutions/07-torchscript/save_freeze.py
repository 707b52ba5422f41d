"""Reference solution: torch.jit.save a scripted model; load, eval, freeze, optimize."""

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
    torch.jit.save(torch.jit.script(model), path)  # key


def load_for_inference(path: str) -> torch.jit.ScriptModule:
    """Load the TorchScript file at `path` on the CPU, ready for fast inference."""
    loaded = torch.jit.load(path, map_location="cpu")  # key
    # Freeze only works in evaluation mode
    loaded.eval()  # key
    # Weights become constants; BatchNorm folds into the convs
    frozen = torch.jit.freeze(loaded)  # key
    return torch.jit.optimize_for_inference(frozen)  # key


if __name__ == "__main__":
    model = SmallConvNet()
    save_scripted(model, "convnet.pt")
    fast = load_for_inference("convnet.pt")
    print(fast.graph)  # no batch_norm left: folded into the convolutions
    x = torch.randn(2, 3, 32, 32)
    print((fast(x) - model.eval()(x)).abs().max())
