"""Exercise: one optimizer step whose gradients are accumulated over micro-batches.

`accumulated_step` must leave exactly the gradients (and, after `optimizer.step()`, exactly the
parameters) that one step on the whole batch would, while never running the model on more than
one micro-batch at a time.
"""

import torch


def accumulated_step(model, optimizer, loss_fn, inputs, targets, micro_batches=4):
    """One optimizer step on (inputs, targets), run as `micro_batches` smaller forward/backward
    passes. `loss_fn(outputs, targets)` returns the mean loss over the rows it is given.
    Returns the full-batch loss as a float."""
    # TODO: clear the gradients left over from the previous step.
    # TODO: split inputs and targets into `micro_batches` pieces along dim 0 without dropping any
    #       rows (torch.tensor_split does that; the last pieces may be one row shorter).
    # TODO: for each piece: loss = loss_fn(model(xb), yb), scaled so the accumulated gradient
    #       equals the full-batch mean's gradient, then loss.backward().
    # TODO: one optimizer.step() at the end; return the full-batch loss as a Python float.
    raise NotImplementedError("TODO: implement accumulated_step")
