"""WRONG: calls model.train() at the start, so a caller who runs the step with the model in eval mode (frozen dropout / BatchNorm statistics) gets its mode changed and different gradients, while the result must be what "one ordinary step on the whole batch" would leave."""

import torch  # noqa: F401


def accumulated_step(model, optimizer, loss_fn, inputs, targets, micro_batches=4):
    """One optimizer step on (inputs, targets), run as `micro_batches` smaller forward/backward
    passes. `loss_fn(outputs, targets)` returns the mean loss over the rows it is given.
    Returns the full-batch loss as a float."""
    model.train()
    optimizer.zero_grad(set_to_none=True)
    n = inputs.shape[0]
    total = 0.0
    for xb, yb in zip(inputs.tensor_split(micro_batches), targets.tensor_split(micro_batches)):
        loss = loss_fn(model(xb), yb) * (xb.shape[0] / n)
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total
