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
    # TODO: one optimizer step that leaves exactly the gradients and parameters of one step on
    #       the whole batch, running the model on one micro-batch at a time. Watch out:
    #       - gradients left over from an earlier step must not leak into this one;
    #       - exactly `micro_batches` pieces, every row used once, also when the batch size does
    #         not divide evenly (then the pieces differ in size, and so does their share);
    #       - use the loss_fn you are given, and return a Python float, not a tensor.
    raise NotImplementedError("TODO: implement accumulated_step")
