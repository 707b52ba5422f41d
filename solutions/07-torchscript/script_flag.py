"""Reference solution: each TorchScript blocker of Tagger gets the decision its use calls for.

- forward and standardise run in the service: they must compile (standardise rewritten in torch,
  the Optional attribute read into a local so that `is not None` narrows it);
- reconstruction_penalty runs only while training, which the service never does: dropped;
- embed is called by the service on its own: exported;
- describe is Python for the training logs: kept as Python on the scripted module, never saved.
"""

from typing import Any, Optional

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

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:  # key
        h = self.body(x)
        scores = self.head(h)
        temperature = self.temperature  # key
        if temperature is not None:  # key
            scores = scores / temperature  # key
        if mask is not None:  # tags a row may not take
            scores = scores.masked_fill(~mask, -30.0)
        if self.training:
            return scores + self.reconstruction_penalty(h, x, weight=0.1)
        return self.standardise(scores)

    def standardise(self, scores: Tensor) -> Tensor:
        """Zero mean and unit (population) variance per row, as the service expects."""
        centred = scores - scores.mean(dim=-1, keepdim=True)  # key
        return centred / (scores.std(dim=-1, keepdim=True, correction=0) + 1e-5)  # key

    @torch.jit.unused  # key
    def reconstruction_penalty(self, h: Tensor, x: Tensor, weight: float = 1.0) -> Tensor:
        """Training only: how badly the features reconstruct the input (one value per row), plus
        weight decay on the decoder."""
        error = (self.decoder(h) - x).pow(2).mean(dim=-1, keepdim=True)
        decay = sum(p.pow(2).sum() for p in self.decoder.parameters())
        return weight * (error + 1e-3 * decay)

    @torch.jit.export  # key
    def embed(self, x: Tensor) -> Tensor:
        """The body's features, which the search index asks the service for."""
        return self.body(x)

    @torch.jit.ignore  # key
    def describe(self, **fields: Any) -> dict[str, Any]:
        """A summary for the training logs."""
        return {"tags": self.head.out_features, "temperature": self.temperature, **fields}


def script_for_serving(model: Tagger) -> torch.jit.ScriptModule:
    """The scripted module the service's file is saved from (the caller's model left as it is)."""
    return torch.jit.script(model)  # key


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
