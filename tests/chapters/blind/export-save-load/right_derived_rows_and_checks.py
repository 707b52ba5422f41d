"""RIGHT: the rules written as torch._check(n > 0) and torch._check(self.capacity - n >= 0), the rows Dim written batch * 2, and the format chosen by testing for the C++ package target first."""

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
        torch._check(n > 0, lambda: "no item selected")
        torch._check(self.capacity - n >= 0, lambda: "too many items selected")
        chosen = pairs.index_select(0, idx)
        query, doc = chosen[:, 0], chosen[:, 1]
        scores = self.head(torch.tanh(self.proj(query)) * doc)
        return torch.cat([scores, scores.new_zeros(self.capacity - n, scores.shape[1])])


def ship(model: nn.Module, example: tuple[torch.Tensor, torch.Tensor], target: dict, path: str) -> None:
    """Write to `path` the file that `target` deploys `model` from; raise ValueError (writing
    nothing) when no file can serve that target."""
    runtime, machine = target["runtime"], target["machine"]
    if runtime not in ("python", "c++") or machine not in ("this", "other"):
        raise ValueError(f"unknown target {target}")
    wants_package = runtime == "c++"
    if wants_package and machine != "this":
        raise ValueError("no file serves a C++ server on another kind of CPU")
    items = Dim("items", min=1, max=int(target["max_batch"]))
    program = torch.export.export(model, tuple(example), dynamic_shapes={"x": {0: items * 2}, "mask": {0: items}})
    if wants_package:
        torch._inductor.aoti_compile_and_package(program, package_path=path)
        return
    torch.export.save(program, path)


if __name__ == "__main__":
    model = PairScorer().eval()
    x, mask = torch.randn(12, 8), torch.tensor([1, 0, 1, 1, 0, 0], dtype=torch.bool)
    print(model(x, mask))
    ship(model, (x, mask), {"runtime": "python", "machine": "other", "max_batch": 32}, "scorer.pt2")
