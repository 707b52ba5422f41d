"""RIGHT: gives forward its types with a MyPy-style `# type:` signature comment, which TorchScript reads, instead of inline annotations; the forward computes the same thing."""

from typing import Optional  # noqa: F401  (used by the type comment)

import torch
from torch import nn


class TwoHeads(nn.Module):
    """A shared body and two heads: class probabilities when `flag` is True (optionally
    sharpened or flattened by `temperature`), one regression value per row when it is False."""

    def __init__(self, dim_in: int = 16, hidden: int = 32, classes: int = 5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim_in, hidden), nn.GELU())
        self.classify = nn.Linear(hidden, classes)
        self.regress = nn.Linear(hidden, 1)

    def forward(self, x, flag, temperature=None):
        # type: (torch.Tensor, bool, Optional[float]) -> torch.Tensor
        h = self.body(x)
        if flag:
            logits = self.classify(h)
            if temperature is not None:
                logits = logits / temperature
            return logits.softmax(dim=-1)
        return self.regress(h).squeeze(-1)


def script_model(model: nn.Module) -> torch.jit.ScriptModule:
    """Compile `model` to TorchScript, keeping both branches of forward."""
    return torch.jit.script(model)


if __name__ == "__main__":
    scripted = script_model(TwoHeads())
    print(scripted.code)
    x = torch.randn(4, 16)
    print(scripted(x, True, 2.0).shape, scripted(x, False).shape)
