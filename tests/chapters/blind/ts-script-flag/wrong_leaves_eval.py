"""WRONG: script_model puts the caller's model into eval mode before scripting and never switches it back, a side effect the stub's "Compile `model` to TorchScript" never asks for (the guide: change only the annotations and script_model's compile)."""

from typing import Optional

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

    def forward(self, x: torch.Tensor, flag: bool, temperature: Optional[float] = None) -> torch.Tensor:
        h = self.body(x)
        if flag:
            logits = self.classify(h)
            if temperature is not None:
                logits = logits / temperature
            return logits.softmax(dim=-1)
        return self.regress(h).squeeze(-1)


def script_model(model: nn.Module) -> torch.jit.ScriptModule:
    """Compile `model` to TorchScript, keeping both branches of forward."""
    model.eval()  # an inference artefact: compile it in evaluation mode
    return torch.jit.script(model)


if __name__ == "__main__":
    scripted = script_model(TwoHeads())
    print(scripted.code)
    x = torch.randn(4, 16)
    print(scripted(x, True, 2.0).shape, scripted(x, False).shape)
