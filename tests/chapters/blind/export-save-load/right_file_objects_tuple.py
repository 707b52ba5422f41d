"""RIGHT: declares the dynamic batch positionally (a tuple, so it does not depend on forward's argument being named x) and writes/reads the archive through open file objects instead of a path."""

import json

import torch
import torch.nn as nn
from torch.export import Dim


def save_program(model: nn.Module, example: torch.Tensor, labels: list[str], path: str) -> None:
    """Export `model` (batch dimension dynamic, 1 to 1024) and save it to `path` with `labels`
    stored inside the archive as `labels.json`."""
    rows = Dim("rows", min=1, max=1024)
    program = torch.export.export(model, (example,), dynamic_shapes=({0: rows},))
    with open(path, "wb") as f:
        torch.export.save(program, f, extra_files={"labels.json": json.dumps(list(labels))})


def load_program(path: str):
    """Load what save_program wrote. Returns (a callable module, the list of labels)."""
    wanted = dict.fromkeys(["labels.json"], "")
    with open(path, "rb") as f:
        program = torch.export.load(f, extra_files=wanted)
    labels = json.loads(wanted["labels.json"])
    return program.module(), [str(name) for name in labels]
