"""Reference solution: one optimizer step whose gradients are accumulated over micro-batches."""

import torch  # noqa: F401 - the stub has it too; learners reach for torch.nn.functional


def accumulated_step(model, optimizer, loss_fn, inputs, targets, micro_batches=4):
    """One optimizer step on (inputs, targets), run as `micro_batches` smaller forward/backward
    passes. Leaves the same gradients (and parameters) as one full-batch step with the mean loss,
    and returns the full-batch loss as a float."""
    optimizer.zero_grad(set_to_none=True)
    n = inputs.shape[0]
    total = 0.0
    # tensor_split keeps every sample: sizes differ by at most one when n does not divide evenly.
    for xb, yb in zip(inputs.tensor_split(micro_batches), targets.tensor_split(micro_batches)):  # key
        # loss_fn averages over its micro-batch; weighting by the micro-batch's share of the batch
        # turns the sum of the micro-batch gradients into the gradient of the full-batch mean.
        # With equal micro-batches the weight is simply 1 / micro_batches.
        loss = loss_fn(model(xb), yb) * (xb.shape[0] / n)  # key
        loss.backward()  # adds into .grad; this micro-batch's activations are freed now
        total += loss.item()
    optimizer.step()
    return total
