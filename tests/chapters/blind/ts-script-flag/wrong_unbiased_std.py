"""WRONG: standardise rewritten in torch with scores.std(dim=-1, keepdim=True), the default unbiased (correction=1) std; breaks 'without changing what any method computes' (the stub's standardise is the population std, numpy's ddof=0)."""

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

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        h = self.body(x)
        scores = self.head(h)
        temperature = self.temperature
        if temperature is not None:
            scores = scores / temperature
        if mask is not None:  # tags a row may not take
            scores = scores.masked_fill(~mask, -30.0)
        if self.training:
            return scores + self.reconstruction_penalty(h, x, weight=0.1)
        return self.standardise(scores)

    def standardise(self, scores: Tensor) -> Tensor:
        """Zero mean and unit (population) variance per row, as the service expects."""
        centred = scores - scores.mean(dim=-1, keepdim=True)
        return centred / (scores.std(dim=-1, keepdim=True) + 1e-5)

    @torch.jit.unused
    def reconstruction_penalty(self, h: Tensor, x: Tensor, weight: float = 1.0) -> Tensor:
        """Training only: how badly the features reconstruct the input (one value per row), plus
        weight decay on the decoder."""
        error = (self.decoder(h) - x).pow(2).mean(dim=-1, keepdim=True)
        decay = sum(p.pow(2).sum() for p in self.decoder.parameters())
        return weight * (error + 1e-3 * decay)

    @torch.jit.export
    def embed(self, x: Tensor) -> Tensor:
        """The body's features, which the search index asks the service for."""
        return self.body(x)

    @torch.jit.ignore
    def describe(self, **fields: Any) -> dict[str, Any]:
        """A summary for the training logs."""
        return {"tags": self.head.out_features, "temperature": self.temperature, **fields}


def script_for_serving(model: Tagger) -> torch.jit.ScriptModule:
    """The scripted module the service's file is saved from (the caller's model left as it is)."""
    return torch.jit.script(model)


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
