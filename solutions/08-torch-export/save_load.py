"""Reference solution: save an exported program with its labels to a .pt2 file, and load it back."""

import json

import torch
import torch.nn as nn
from torch.export import Dim


def save_program(model: nn.Module, example: torch.Tensor, labels: list[str], path: str) -> None:
    """Export `model` (batch dimension dynamic, 1 to 1024) and save it to `path` with `labels`
    stored inside the archive as `labels.json`."""
    batch = Dim("batch", min=1, max=1024)
    ep = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})  # key
    torch.export.save(ep, path, extra_files={"labels.json": json.dumps(labels)})  # key


def load_program(path: str):
    """Load what save_program wrote. Returns (a callable module, the list of labels)."""
    # The names to read back; load fills in their contents.
    extra = {"labels.json": ""}  # key
    ep = torch.export.load(path, extra_files=extra)  # key
    return ep.module(), json.loads(extra["labels.json"])  # key
