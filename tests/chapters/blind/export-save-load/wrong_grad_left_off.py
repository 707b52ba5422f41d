"""WRONG: save_program disables autograd globally with torch.set_grad_enabled(False) to export an inference graph and never turns it back on, leaving the caller's process without gradients; the task only asks to export and save."""

import json

import torch
import torch.nn as nn
from torch.export import Dim


def save_program(model: nn.Module, example: torch.Tensor, labels: list[str], path: str) -> None:
    """Export `model` (batch dimension dynamic, 1 to 1024) and save it to `path` with `labels`
    stored inside the archive as `labels.json`."""
    torch.set_grad_enabled(False)  # an inference program: no autograd in the graph
    batch = Dim("batch", min=1, max=1024)
    ep = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
    torch.export.save(ep, path, extra_files={"labels.json": json.dumps(labels)})


def load_program(path: str):
    """Load what save_program wrote. Returns (a callable module, the list of labels)."""
    extra = {"labels.json": ""}
    ep = torch.export.load(path, extra_files=extra)
    return ep.module(), json.loads(extra["labels.json"])
