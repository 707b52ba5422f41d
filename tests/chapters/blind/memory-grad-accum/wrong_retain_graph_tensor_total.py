"""WRONG: backward(retain_graph=True) plus a running tensor total keeps every micro-batch's graph and saved activations alive until the step ends, so the peak is that of the full batch, the very thing accumulation exists to avoid ("Only one micro-batch's activations exist at a time"; "a tensor keeps references into every micro-batch's graph")."""

import torch


def accumulated_step(model, optimizer, loss_fn, inputs, targets, micro_batches=4):
    """One optimizer step on (inputs, targets), run as `micro_batches` smaller forward/backward
    passes. `loss_fn(outputs, targets)` returns the mean loss over the rows it is given.
    Returns the full-batch loss as a float."""
    optimizer.zero_grad(set_to_none=True)
    n = inputs.shape[0]
    total = torch.zeros(())
    for xb, yb in zip(inputs.tensor_split(micro_batches), targets.tensor_split(micro_batches)):
        loss = loss_fn(model(xb), yb) * (xb.shape[0] / n)
        loss.backward(retain_graph=True)
        total = total + loss
    optimizer.step()
    return total.item()
