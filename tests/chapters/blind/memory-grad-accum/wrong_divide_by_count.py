"""WRONG: scales every micro-batch loss by 1 / micro_batches even when the pieces differ in size (30 rows in 4 is 8, 8, 7, 7), so short pieces' rows weigh more than the others, breaking "The exact weight for micro-batch j is its share of the batch, b_j / B"."""

import torch  # noqa: F401


def accumulated_step(model, optimizer, loss_fn, inputs, targets, micro_batches=4):
    """One optimizer step on (inputs, targets), run as `micro_batches` smaller forward/backward
    passes. `loss_fn(outputs, targets)` returns the mean loss over the rows it is given.
    Returns the full-batch loss as a float."""
    optimizer.zero_grad(set_to_none=True)
    total = 0.0
    for xb, yb in zip(inputs.tensor_split(micro_batches), targets.tensor_split(micro_batches)):
        loss = loss_fn(model(xb), yb) / micro_batches
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total
