"""Exercise: ship an exported program in a .pt2 file, with its class labels inside.

1. `save_program(model, example, labels, path)`: export `model` so that the batch dimension
   is dynamic (any size from 1 to 1024; the model's forward is `forward(self, x)` with x of
   shape (batch, features)), then save the program to `path` with the list of class names
   stored in the same archive as an extra file called `labels.json`.
2. `load_program(path)`: load the file and return `(module, labels)`: something you can call
   as `module(x)`, and the list of class names.

The loader must not need the model's Python class: everything comes from the file.
"""

import json

import torch
import torch.nn as nn
from torch.export import Dim


def save_program(model: nn.Module, example: torch.Tensor, labels: list[str], path: str) -> None:
    """Export `model` (batch dimension dynamic, 1 to 1024) and save it to `path` with `labels`
    stored inside the archive as `labels.json`."""
    # TODO: an exported program whose batch dimension may be anything from 1 to 1024 (and no more).
    # TODO: one .pt2 archive holding both the program and the labels, as JSON text under the
    #       name labels.json.
    raise NotImplementedError("TODO: export and save")


def load_program(path: str):
    """Load what save_program wrote. Returns (a callable module, the list of labels)."""
    # TODO: read the program and labels.json back from the archive (loading can fill in extra
    #       files for you: look at how it is told which names to read).
    # TODO: watch out: what loading returns is a description of a program, not something you
    #       can call.
    raise NotImplementedError("TODO: load")
