"""WRONG: load_program memoises by path with functools.lru_cache, so after save_program writes a new model (or new labels) to the same path, loading returns the stale program and labels instead of "load the file"."""

import functools
import json

import torch
import torch.nn as nn
from torch.export import Dim


def save_program(model: nn.Module, example: torch.Tensor, labels: list[str], path: str) -> None:
    """Export `model` (batch dimension dynamic, 1 to 1024) and save it to `path` with `labels`
    stored inside the archive as `labels.json`."""
    batch = Dim("batch", min=1, max=1024)
    ep = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
    torch.export.save(ep, path, extra_files={"labels.json": json.dumps(labels)})


@functools.lru_cache(maxsize=None)
def load_program(path: str):
    """Load what save_program wrote. Returns (a callable module, the list of labels)."""
    # Loading deserialises the whole graph: do it once per file.
    extra = {"labels.json": ""}
    ep = torch.export.load(path, extra_files=extra)
    return ep.module(), json.loads(extra["labels.json"])
