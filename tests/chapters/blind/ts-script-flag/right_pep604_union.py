"""RIGHT: writes the optional temperature with PEP 604 syntax (`float | None`) and scripts through a small guard that returns an already-scripted module as is, instead of typing.Optional and a bare torch.jit.script call."""

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

    def forward(self, x: torch.Tensor, flag: bool, temperature: float | None = None) -> torch.Tensor:
        h = self.body(x)
        if flag:
            logits = self.classify(h)
            if temperature is not None:
                logits = logits / temperature
            return logits.softmax(dim=-1)
        return self.regress(h).squeeze(-1)


def script_model(model: nn.Module) -> torch.jit.ScriptModule:
    """Compile `model` to TorchScript, keeping both branches of forward."""
    if isinstance(model, torch.jit.ScriptModule):
        return model
    scripted = torch.jit.script(model)
    return scripted


if __name__ == "__main__":
    scripted = script_model(TwoHeads())
    print(scripted.code)
    x = torch.randn(4, 16)
    print(scripted(x, True, 2.0).shape, scripted(x, False).shape)
