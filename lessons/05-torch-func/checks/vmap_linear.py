"""Check: batched_linear uses vmap and equals a loop of F.linear calls on awkward shapes (size 1,
odd sizes, non-contiguous inputs, float64); report its speed against the Python loop it replaces
(and the reference's)."""

import torch
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode

from _common import traced_vmap

_MATMULS = {"linear", "matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "addmm", "baddbmm", "addbmm", "mv",
            "addmv", "dot", "einsum", "tensordot", "bilinear"}


class _CountMatmuls(TorchFunctionMode):
    """Counts the matrix-multiply calls a call makes (F.linear, matmul, @, einsum, ...): vmap's
    point is one call for all N layers, where chunk_size=1 makes one per layer, like the loop."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in _MATMULS:
            self.calls += 1
        return func(*args, **(kwargs or {}))


def _loop(x, weight, bias):
    return torch.stack([F.linear(x, weight[n], bias[n]) for n in range(weight.shape[0])], dim=1)


def check(ctx):
    used_vmap = False
    mine = ctx.learner
    # (N layers, batch, in, out, dtype, non-contiguous): no two sizes equal in the odd cases, so a
    # reshape in place of a transpose, or a transposed weight, cannot come out right by accident.
    # The last flag: x, weight and bias require grad (a multi-head model in training), so the
    # result must carry the graph back to them.
    shapes = [(5, 7, 3, 2, torch.float32, False, True), (1, 1, 1, 1, torch.float32, False, False),
              (16, 33, 20, 9, torch.float32, False, False), (3, 4, 6, 5, torch.float32, True, True),
              (6, 2, 5, 4, torch.float64, False, False)]
    for trial in ctx.trials(len(shapes)):
        n, batch, d_in, d_out, dtype, noncontig, needs_grad = shapes[trial]
        x = ctx.randn(batch, d_in, dtype=dtype, noncontiguous=noncontig, requires_grad=needs_grad)
        weight = ctx.randn(n, d_out, d_in, dtype=dtype, noncontiguous=noncontig, requires_grad=needs_grad)
        bias = ctx.randn(n, d_out, dtype=dtype, requires_grad=needs_grad)
        expected = _loop(x, weight, bias)
        counter = _CountMatmuls()
        try:
            with counter:
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
        ctx.expect_close(f"batched_linear output ({where})", out.detach(), expected.detach())
        # One matmul kernel per layer is the Python loop again (vmap with chunk_size=1, or a loop
        # inside the vmapped function); the reference runs one batched matmul whatever N is.
        ctx.expect(n < 3 or counter.calls < n,
                   ctx.t("batched_linear ({where}) ran {calls} matrix multiplies for {n} layers, one per layer: "
                         "that is the N calls vmap exists to replace (chunk_size=1 runs vmap one layer at a "
                         "time). Let vmap batch all N layers into one call", where=where, calls=counter.calls, n=n))
        if needs_grad:
            ctx.expect(out.requires_grad,
                       ctx.t("batched_linear ({where}) returned a result that does not require grad although x, "
                             "weight and bias do: it was computed under torch.no_grad() (or from detached "
                             "tensors), so a model built on it cannot train. Leave autograd as the caller set it",
                             where=where))
            g = ctx.randn(*out.shape, dtype=dtype)
            got = torch.autograd.grad(out, (x, weight, bias), grad_outputs=g, allow_unused=True)
            want = torch.autograd.grad(expected, (x, weight, bias), grad_outputs=g)
            names, inputs = ("x", "weight", "bias"), (x, weight, bias)
            ctx.expect_close(f"gradients of batched_linear with respect to x, weight and bias ({where})",
                             {k: torch.zeros_like(t) if a is None else a for k, t, a in zip(names, inputs, got)},
                             dict(zip(names, want)))
    ctx.expect(used_vmap, ctx.t("batched_linear gives the right values but never calls torch.func.vmap: "
                                "this exercise is about vmap"))

    # Many small layers: here the loop's cost is N Python-level calls, and vmap's one batched
    # matmul is several times faster (see the guide for when it is not).
    n, batch, d_in, d_out = 256, 16, 32, 32
    x, weight, bias = ctx.randn(batch, d_in), ctx.randn(n, d_out, d_in), ctx.randn(n, d_out)
    loop = ctx.t("the loop")
    ctx.time(lambda: mine.batched_linear(x, weight, bias), lambda: _loop(x, weight, bias),
             compares=ctx.t("yours vs the Python loop over {n} layers", n=n), sides=(ctx.t("yours"), loop))
    ctx.time(lambda: ctx.reference.batched_linear(x, weight, bias), lambda: _loop(x, weight, bias),
             name="reference_vs_loop", label=ctx.t("the reference against the loop"),
             compares=ctx.t("the reference solution vs the same loop over {n} layers", n=n),
             sides=(ctx.t("the reference"), loop))
