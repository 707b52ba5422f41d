"""The checker of the probe tests: one call, every promise of tutor.runner.probes."""

import torch


def check(ctx):
    def make(shape, dtype):
        return (ctx.randn(*shape, dtype=dtype, scale=3.0),)

    ctx.probe(
        "softplus",
        make,
        dtypes=(torch.float64, torch.bfloat16),
        shapes=((1,), (2, 3, 4)),
        noncontiguous=True,
        expanded=True,
        extremes=True,
        grad=True,
        nonleaf=True,
        expanded_grad=True,
        double_backward=True,
        vmap_dims=(0, 1),
        repeat=True,
        tol={torch.bfloat16: {"atol": 2e-2, "rtol": 2e-2}},
    )
