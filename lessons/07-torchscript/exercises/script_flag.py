"""Exercise: script a model whose forward branches on a bool flag.

TorchScript compiles the Python source of forward into a statically typed program. It
cannot guess the type of an argument from how you call it later: every argument without an
annotation is assumed to be a Tensor. Annotate the others, then compile with torch.jit.script.
"""

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

    # TODO: TorchScript compiles this forward with static types, decided from the source alone.
    #       Make the compiled version accept the calls in the __main__ block below (a Python bool
    #       for flag; a temperature that is either left out or a number) without changing what
    #       forward computes. Run the file first and read what TorchScript assumed.
    def forward(self, x, flag, temperature=None):
        h = self.body(x)
        if flag:
            logits = self.classify(h)
            if temperature is not None:
                logits = logits / temperature
            return logits.softmax(dim=-1)
        return self.regress(h).squeeze(-1)


def script_model(model: nn.Module) -> torch.jit.ScriptModule:
    """Compile `model` to TorchScript, keeping both branches of forward."""
    # TODO: compile it so that BOTH branches of the `if flag:` survive.
    raise NotImplementedError("TODO: script the model")


if __name__ == "__main__":
    scripted = script_model(TwoHeads())
    print(scripted.code)  # the compiled forward: look for the `if flag:`
    x = torch.randn(4, 16)
    print(scripted(x, True, 2.0).shape, scripted(x, False).shape)
