"""WRONG: save_program freezes the caller's model (requires_grad_(False) on every parameter, eval mode) before exporting and leaves it that way, so the model the caller keeps training no longer learns; the task only asks to export and save it."""

import json

import torch
import torch.nn as nn
from torch.export import Dim


def save_program(model: nn.Module, example: torch.Tensor, labels: list[str], path: str) -> None:
    """Export `model` (batch dimension dynamic, 1 to 1024) and save it to `path` with `labels`
    stored inside the archive as `labels.json`."""
    model.eval()
    for p in model.parameters():  # shipped weights are constants: no gradients in the program
        p.requires_grad_(False)
    batch = Dim("batch", min=1, max=1024)
    ep = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
    torch.export.save(ep, path, extra_files={"labels.json": json.dumps(labels)})


def load_program(path: str):
    """Load what save_program wrote. Returns (a callable module, the list of labels)."""
    extra = {"labels.json": ""}
    ep = torch.export.load(path, extra_files=extra)
    return ep.module(), json.loads(extra["labels.json"])
