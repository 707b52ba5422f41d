"""WRONG: save_program stores the labels sorted (json.dumps(sorted(labels))), so label i in the file no longer names output column i, against "storing `labels` ... containing json.dumps(labels)"; it is only right when the labels were already sorted."""

import json

import torch
import torch.nn as nn
from torch.export import Dim


def save_program(model: nn.Module, example: torch.Tensor, labels: list[str], path: str) -> None:
    """Export `model` (batch dimension dynamic, 1 to 1024) and save it to `path` with `labels`
    stored inside the archive as `labels.json`."""
    batch = Dim("batch", min=1, max=1024)
    ep = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
    # Canonical JSON: sorted, so the same label set always gives the same bytes.
    torch.export.save(ep, path, extra_files={"labels.json": json.dumps(sorted(labels), sort_keys=True)})


def load_program(path: str):
    """Load what save_program wrote. Returns (a callable module, the list of labels)."""
    extra = {"labels.json": ""}
    ep = torch.export.load(path, extra_files=extra)
    return ep.module(), json.loads(extra["labels.json"])
