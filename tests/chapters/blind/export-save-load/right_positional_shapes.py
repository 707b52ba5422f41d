"""RIGHT: dynamic_shapes given as a tuple in argument order, the empty-selection rule as torch._check(idx.numel() >= 1) before n is used, and the Python target written with torch.export.save after a dict-based choice."""

import torch
import torch.nn as nn
from torch.export import Dim


class PairScorer(nn.Module):
    """Scores selected query-document pairs. `x` holds two rows per item (the query, then its
    document), `mask` one bool per item. Returns `capacity` rows: the scores of the selected
    items in order, then rows of zeros. Selecting no item, or more than `capacity`, is an error."""

    def __init__(self, features: int = 8, classes: int = 3, capacity: int = 5):
        super().__init__()
        self.proj = nn.Linear(features, features)
        self.head = nn.Linear(features, classes)
        self.capacity = capacity

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        pairs = x.view(mask.shape[0], 2, x.shape[-1])
        idx = mask.nonzero().squeeze(-1)
        n = idx.shape[0]
        torch._check(idx.numel() >= 1, lambda: "no item selected")
        torch._check(n <= self.capacity, lambda: f"more than {self.capacity} items selected")
        chosen = pairs.index_select(0, idx)
        query, doc = chosen[:, 0], chosen[:, 1]
        scores = self.head(torch.tanh(self.proj(query)) * doc)
        return torch.cat([scores, scores.new_zeros(self.capacity - n, scores.shape[1])])


def ship(model: nn.Module, example: tuple[torch.Tensor, torch.Tensor], target: dict, path: str) -> None:
    """Write to `path` the file that `target` deploys `model` from; raise ValueError (writing
    nothing) when no file can serve that target."""
    if target["runtime"] == "c++" and target["machine"] == "other":
        raise ValueError("a C++ server runs only a package compiled for its own kind of machine: build it there")
    batch = Dim("batch", min=1, max=target["max_batch"])
    shapes = ({0: 2 * batch}, {0: batch})
    program = torch.export.export(model, example, dynamic_shapes=shapes)
    if target["runtime"] == "python":
        torch.export.save(program, path)
    else:
        torch._inductor.aoti_compile_and_package(program, package_path=path)


if __name__ == "__main__":
    model = PairScorer().eval()
    x, mask = torch.randn(12, 8), torch.tensor([1, 0, 1, 1, 0, 0], dtype=torch.bool)
    print(model(x, mask))
    ship(model, (x, mask), {"runtime": "python", "machine": "other", "max_batch": 32}, "scorer.pt2")
