"""Check: batched_linear uses vmap and equals a loop of F.linear calls on awkward shapes;
report its speed against the loop (and the reference's)."""

import torch
from torch.nn import functional as F

from _common import traced_vmap


def _loop(x, weight, bias):
    return torch.stack([F.linear(x, weight[n], bias[n]) for n in range(weight.shape[0])], dim=1)


def check(ctx):
    used_vmap = False
    mine = ctx.learner
    # (N layers, batch, in, out); the last trial has a non-contiguous weight.
    shapes = [(5, 7, 3, 2), (1, 1, 1, 1), (16, 33, 20, 9), (3, 4, 6, 5)]
    for trial in ctx.trials(len(shapes)):
        n, batch, d_in, d_out = shapes[trial]
        x = ctx.randn(batch, d_in)
        weight = ctx.randn(n, d_out, d_in, noncontiguous=(trial == 3))
        bias = ctx.randn(n, d_out)
        expected = _loop(x, weight, bias)
        try:
            out, used = traced_vmap(ctx.no_mutation, mine.batched_linear, x, weight, bias)
        except ValueError as exc:
            if "same size in the mapped dimension" not in str(exc):
                raise
            ctx.fail(f"batched_linear(x {tuple(x.shape)}, weight {tuple(weight.shape)}, bias "
                     f"{tuple(bias.shape)}) raised: {str(exc).rstrip('.!')}. x is shared by all {n} layers, so it "
                     f"must not be mapped: in_dims=None for x", [])
        used_vmap = used_vmap or used
        ctx.expect(isinstance(out, torch.Tensor),
                   f"batched_linear returned a {type(out).__name__}, expected a tensor")
        ctx.expect(tuple(out.shape) == tuple(expected.shape),
                   f"batched_linear(x, weight, bias) with x {tuple(x.shape)}, weight "
                   f"{tuple(weight.shape)}: shape {tuple(out.shape)} != expected (batch, N, out) = "
                   f"{tuple(expected.shape)}" + (" (the mapped dim goes at position 1: out_dims=1)"
                                                 if tuple(out.shape) == (n, batch, d_out) else ""))
        ctx.expect_close(f"batched_linear output (N={n}, batch={batch}, in={d_in}, out={d_out})",
                         out, expected)
    ctx.expect(used_vmap, "batched_linear gives the right values but never calls "
                          "torch.func.vmap: this exercise is about vmap")

    n, batch, d_in, d_out = 64, 32, 64, 32
    x, weight, bias = ctx.randn(batch, d_in), ctx.randn(n, d_out, d_in), ctx.randn(n, d_out)
    # "time": yours vs the Python loop (its speedup is how many times faster than the loop).
    ctx.time(lambda: mine.batched_linear(x, weight, bias), lambda: _loop(x, weight, bias))
    ctx.time(lambda: ctx.reference.batched_linear(x, weight, bias), lambda: _loop(x, weight, bias),
             name="reference_vs_loop")
