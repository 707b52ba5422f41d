"""Check: batched_linear uses vmap and equals a loop of F.linear calls on awkward shapes (size 1,
odd sizes, non-contiguous inputs, float64); report its speed against the Python loop it replaces
(and the reference's)."""

import torch
from torch.nn import functional as F

from _common import traced_vmap


def _loop(x, weight, bias):
    return torch.stack([F.linear(x, weight[n], bias[n]) for n in range(weight.shape[0])], dim=1)


def check(ctx):
    used_vmap = False
    mine = ctx.learner
    # (N layers, batch, in, out, dtype, non-contiguous): no two sizes equal in the odd cases, so a
    # reshape in place of a transpose, or a transposed weight, cannot come out right by accident.
    shapes = [(5, 7, 3, 2, torch.float32, False), (1, 1, 1, 1, torch.float32, False),
              (16, 33, 20, 9, torch.float32, False), (3, 4, 6, 5, torch.float32, True),
              (6, 2, 5, 4, torch.float64, False)]
    for trial in ctx.trials(len(shapes)):
        n, batch, d_in, d_out, dtype, noncontig = shapes[trial]
        x = ctx.randn(batch, d_in, dtype=dtype, noncontiguous=noncontig)
        weight = ctx.randn(n, d_out, d_in, dtype=dtype, noncontiguous=noncontig)
        bias = ctx.randn(n, d_out, dtype=dtype)
        expected = _loop(x, weight, bias)
        try:
            out, used = traced_vmap(ctx.no_mutation, mine.batched_linear, x, weight, bias)
        except ValueError as exc:
            if "same size in the mapped dimension" not in str(exc):
                raise
            ctx.fail(ctx.t("batched_linear(x {x}, weight {weight}, bias {bias}) raised: {error}. x is shared "
                           "by all {n} layers, so it must not be mapped: in_dims=None for x",
                           x=tuple(x.shape), weight=tuple(weight.shape), bias=tuple(bias.shape),
                           error=str(exc).rstrip(".!"), n=n), [])
        used_vmap = used_vmap or used
        ctx.expect(isinstance(out, torch.Tensor),
                   ctx.t("batched_linear returned a {kind}, expected a tensor", kind=type(out).__name__))
        ctx.expect(tuple(out.shape) == tuple(expected.shape),
                   ctx.t("batched_linear(x, weight, bias) with x {x}, weight {weight}: shape {got} != expected "
                         "(batch, N, out) = {want}{why}", x=tuple(x.shape), weight=tuple(weight.shape),
                         got=tuple(out.shape), want=tuple(expected.shape),
                         why=ctx.t(" (the mapped dim goes at position 1: out_dims=1)")
                         if tuple(out.shape) == (n, batch, d_out) else ""))
        ctx.expect(out.dtype == dtype, ctx.t("batched_linear turned {dtype} inputs into a {got} result: keep "
                                             "the inputs' dtype", dtype=str(dtype)[6:], got=str(out.dtype)[6:]))
        where = f"N={n}, batch={batch}, in={d_in}, out={d_out}, {str(dtype)[6:]}" + (
            ctx.t(", non-contiguous x and weight") if noncontig else "")
        if trial == 0 and tuple(out.shape) == tuple(expected.shape):
            # The classic way to get (batch, N, out) from (N, batch, out): reshape instead of
            # moving the dim. Same shape, numbers from the wrong layers.
            scrambled = expected.transpose(0, 1).reshape(expected.shape)
            ctx.expect(not torch.allclose(out, scrambled, atol=1e-5),
                       ctx.t("batched_linear ({where}) has the right shape but its rows are scrambled: it "
                             "matches vmap's (N, batch, out) result reshaped to (batch, N, out). A reshape "
                             "reinterprets memory; moving a dim needs out_dims=1 (or .transpose/.movedim)",
                             where=where))
        ctx.expect_close(f"batched_linear output ({where})", out, expected)
    ctx.expect(used_vmap, ctx.t("batched_linear gives the right values but never calls torch.func.vmap: "
                                "this exercise is about vmap"))

    # Many small layers: here the loop's cost is N Python-level calls, and vmap's one batched
    # matmul is several times faster (see the guide for when it is not).
    n, batch, d_in, d_out = 256, 16, 32, 32
    x, weight, bias = ctx.randn(batch, d_in), ctx.randn(n, d_out, d_in), ctx.randn(n, d_out)
    ctx.time(lambda: mine.batched_linear(x, weight, bias), lambda: _loop(x, weight, bias),
             compares=f"yours vs the Python loop over {n} layers (speedup = times faster than the loop)")
    ctx.time(lambda: ctx.reference.batched_linear(x, weight, bias), lambda: _loop(x, weight, bias),
             name="reference_vs_loop", compares=f"the reference solution vs the same loop over {n} layers")
