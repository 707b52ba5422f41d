"""RIGHT: builds the piece sizes as a list and uses torch.split (sizes differ by at most one, larger first), weights by len(targets piece) / len(targets), and keeps the reported loss as a sum of detached tensors, converted to a float once at the end."""

import torch


def accumulated_step(model, optimizer, loss_fn, inputs, targets, micro_batches=4):
    """One optimizer step on (inputs, targets), run as `micro_batches` smaller forward/backward
    passes. `loss_fn(outputs, targets)` returns the mean loss over the rows it is given.
    Returns the full-batch loss as a float."""
    n = len(targets)
    sizes = [n // micro_batches + (1 if i < n % micro_batches else 0) for i in range(micro_batches)]
    optimizer.zero_grad()
    reported = torch.zeros((), dtype=torch.float64)
    for xb, yb in zip(torch.split(inputs, sizes), torch.split(targets, sizes)):
        weighted = loss_fn(model(xb), yb) * (len(yb) / n)
        weighted.backward()
        reported += weighted.detach().double()  # detached: holds no graph
    optimizer.step()
    return float(reported)
