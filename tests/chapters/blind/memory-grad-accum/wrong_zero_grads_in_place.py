"""WRONG: clears the leftovers with p.grad.zero_() on every parameter, which raises AttributeError on a fresh model whose .grad is still None (and skips nothing it should), so "gradients left over from an earlier step must not leak" is only handled when an earlier step happened."""

import torch  # noqa: F401


def accumulated_step(model, optimizer, loss_fn, inputs, targets, micro_batches=4):
    """One optimizer step on (inputs, targets), run as `micro_batches` smaller forward/backward
    passes. `loss_fn(outputs, targets)` returns the mean loss over the rows it is given.
    Returns the full-batch loss as a float."""
    # zero in place: keeps the gradient buffers allocated between steps
    for p in model.parameters():
        p.grad.zero_()
    n = inputs.shape[0]
    total = 0.0
    for xb, yb in zip(inputs.tensor_split(micro_batches), targets.tensor_split(micro_batches)):
        loss = loss_fn(model(xb), yb) * (xb.shape[0] / n)
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total
