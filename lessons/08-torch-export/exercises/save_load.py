"""Exercise: ship a model with a data-dependent size to where it will run.

`ship(model, example, target, path)` writes the one file a deployment target loads `model`
from. A target is a dict:

- "runtime": "python" (a Python service with torch installed) or "c++" (a C++ server that
  links libtorch and runs no Python);
- "machine": "this" (the same kind of CPU as the machine you ship from) or "other" (a
  different CPU architecture);
- "max_batch": the most items one call may hold.

The rules every target shares:

- no machine has a C++ compiler at load time: loading and calling the file compiles nothing;
- the file accepts every batch of 1 to max_batch items (x holds two rows per item, so 2 to
  2 * max_batch rows) and rejects a larger one (a C++ server checks its inputs, and its checks
  start at 2 items: that is how export treats sizes 0 and 1, nothing for you to change);
- what the eager PairScorer refuses, the file refuses too: a call that selects no item, or
  more than `capacity` items, raises;
- when no file can serve a target, ship raises ValueError and writes nothing.

The check loads each file in a fresh process that has neither this module nor a compiler.
"""

import torch
import torch.nn as nn


class PairScorer(nn.Module):
    """Scores selected query-document pairs. `x` holds two rows per item (the query, then its
    document), `mask` one bool per item. Returns `capacity` rows: the scores of the selected
    items in order, then rows of zeros. Selecting no item, or more than `capacity`, is an error."""

    def __init__(self, features: int = 8, classes: int = 3, capacity: int = 5):
        super().__init__()
        self.proj = nn.Linear(features, features)
        self.head = nn.Linear(features, classes)
        self.capacity = capacity

    # TODO: torch.export cannot trace this forward as it is. Make it exportable without changing
    #       what it computes or what it refuses.
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        pairs = x.view(mask.shape[0], 2, x.shape[-1])
        idx = mask.nonzero().squeeze(-1)
        n = idx.shape[0]
        if n == 0:
            raise ValueError("no item selected")
        if n > self.capacity:
            raise ValueError(f"more than {self.capacity} items selected")
        chosen = pairs.index_select(0, idx)
        query, doc = chosen[:, 0], chosen[:, 1]
        scores = self.head(torch.tanh(self.proj(query)) * doc)
        return torch.cat([scores, scores.new_zeros(self.capacity - n, scores.shape[1])])


def ship(model: nn.Module, example: tuple[torch.Tensor, torch.Tensor], target: dict, path: str) -> None:
    """Write to `path` the file that `target` deploys `model` from; raise ValueError (writing
    nothing) when no file can serve that target."""
    # TODO: decide, from the target, which file (if any) can serve it under the rules above.
    # TODO: capture the model with the batch sizes the target allows, for both inputs.
    raise NotImplementedError("TODO: ship the model")


if __name__ == "__main__":
    model = PairScorer().eval()
    x, mask = torch.randn(12, 8), torch.tensor([1, 0, 1, 1, 0, 0], dtype=torch.bool)
    print(model(x, mask))
    ship(model, (x, mask), {"runtime": "python", "machine": "other", "max_batch": 32}, "scorer.pt2")
