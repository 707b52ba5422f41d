"""Exercise: get a model with TorchScript blockers into a file a service can run.

The ranking service loads `Tagger` from a file saved with torch.jit.save, in a process that has
no Python code of yours (in production, a C++ runtime). The training job keeps the Python object
and goes on using the scripted module in-process. What each side calls:

- the service, in eval mode: forward(x), forward(x, mask) and embed(x); it never trains;
- the training job: describe(run=..., epoch=...) on the scripted module, for its logs.

torch.jit.script(Tagger()) fails today. For each method, decide what it needs: to be compiled
(fix it so that it compiles, without changing what it computes), to stay Python, to be dropped,
or to be compiled although forward never calls it. The check saves your scripted module, loads
the file in a fresh process without this class, and calls what the service calls.
"""

from typing import Any, Optional

import numpy as np
import torch
from torch import Tensor, nn


class Tagger(nn.Module):
    """Scores `tags` tags for each row of `features` numbers. In training mode forward adds a
    reconstruction penalty; in eval mode it returns standardised scores (zero mean, unit
    variance per row), which is what the ranking service serves."""

    temperature: Optional[float]

    def __init__(self, features: int = 16, hidden: int = 32, tags: int = 6, temperature: Optional[float] = None):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, hidden), nn.GELU())
        self.head = nn.Linear(hidden, tags)
        self.decoder = nn.Linear(hidden, features)  # training only: reconstructs the input
        self.temperature = temperature

    # TODO: forward, and every method below, as TorchScript needs it for the two callers in the
    #       module docstring. Keep the layers and what each method computes as they are.
    def forward(self, x, mask=None):
        h = self.body(x)
        scores = self.head(h)
        if self.temperature is not None:
            scores = scores / self.temperature
        if mask is not None:  # tags a row may not take
            scores = scores.masked_fill(~mask, -30.0)
        if self.training:
            return scores + self.reconstruction_penalty(h, x, weight=0.1)
        return self.standardise(scores)

    def standardise(self, scores: Tensor) -> Tensor:
        """Zero mean and unit (population) variance per row, as the service expects."""
        a = scores.detach().cpu().numpy()
        a = (a - a.mean(axis=-1, keepdims=True)) / (a.std(axis=-1, keepdims=True) + 1e-5)
        return torch.from_numpy(a).to(scores.dtype)

    def reconstruction_penalty(self, h: Tensor, x: Tensor, weight: float = 1.0) -> Tensor:
        """Training only: how badly the features reconstruct the input (one value per row), plus
        weight decay on the decoder."""
        error = (self.decoder(h) - x).pow(2).mean(dim=-1, keepdim=True)
        decay = sum(p.pow(2).sum() for p in self.decoder.parameters())
        return weight * (error + 1e-3 * decay)

    def embed(self, x: Tensor) -> Tensor:
        """The body's features, which the search index asks the service for."""
        return self.body(x)

    def describe(self, **fields: Any) -> dict[str, Any]:
        """A summary for the training logs."""
        return {"tags": self.head.out_features, "temperature": self.temperature, **fields}


def script_for_serving(model: Tagger) -> torch.jit.ScriptModule:
    """The scripted module the service's file is saved from (the caller's model left as it is)."""
    # TODO: compile `model` with TorchScript.
    raise NotImplementedError("TODO: script the model")


if __name__ == "__main__":
    import tempfile

    model = Tagger(temperature=2.0)
    scripted = script_for_serving(model)
    print(scripted.describe(run="local"))
    path = tempfile.mkdtemp() + "/tagger.pt"
    torch.jit.save(scripted, path)
    served = torch.jit.load(path).eval()
    x = torch.randn(4, 16)
    print(served(x).shape, served.embed(x).shape)
