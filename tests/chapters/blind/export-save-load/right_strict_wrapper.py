"""RIGHT: exports with strict=True (the Dynamo front end) and keyword-style export arguments, and load_program returns a small nn.Module wrapper around the loaded program's module plus the labels."""

import json

import torch
import torch.nn as nn
from torch.export import Dim


class _Served(nn.Module):
    """What load_program hands out: the loaded graph, called like the original model."""

    def __init__(self, program: nn.Module) -> None:
        super().__init__()
        self.program = program

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.program(x)


def save_program(model: nn.Module, example: torch.Tensor, labels: list[str], path: str) -> None:
    """Export `model` (batch dimension dynamic, 1 to 1024) and save it to `path` with `labels`
    stored inside the archive as `labels.json`."""
    ep = torch.export.export(
        model, args=(example,), dynamic_shapes={"x": {0: Dim("batch", min=1, max=1024)}}, strict=True
    )
    torch.export.save(ep, f=path, extra_files={"labels.json": json.dumps(labels)})


def load_program(path: str):
    """Load what save_program wrote. Returns (a callable module, the list of labels)."""
    extra_files = {"labels.json": ""}
    ep = torch.export.load(path, extra_files=extra_files)
    return _Served(ep.module()), json.loads(extra_files["labels.json"])
