"""RIGHT: computes the piece boundaries by hand with divmod (larger pieces first), backpropagates each piece's SUM of per-row losses (mean times rows) and divides the accumulated gradients by n once at the end."""

import torch  # noqa: F401


def accumulated_step(model, optimizer, loss_fn, inputs, targets, micro_batches=4):
    """One optimizer step on (inputs, targets), run as `micro_batches` smaller forward/backward
    passes. `loss_fn(outputs, targets)` returns the mean loss over the rows it is given.
    Returns the full-batch loss as a float."""
    optimizer.zero_grad(set_to_none=True)
    n = inputs.shape[0]
    base, extra = divmod(n, micro_batches)
    start = 0
    total = 0.0
    for j in range(micro_batches):
        stop = start + base + (1 if j < extra else 0)
        xb, yb = inputs[start:stop], targets[start:stop]
        piece_sum = loss_fn(model(xb), yb) * (stop - start)  # mean over the piece -> its sum
        piece_sum.backward()
        total += piece_sum.item()
        start = stop
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None:
                p.grad.div_(n)  # sum over the batch -> mean over the batch
    optimizer.step()
    return total / n
