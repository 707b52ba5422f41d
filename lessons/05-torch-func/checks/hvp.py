"""Check: hvp(f, x, v) equals the float64 Hessian times v (one direction or k, float32 and
float64, n = 1, non-contiguous directions), leaves x and v alone, and at n = 1024 stays far below
the memory of the Hessian it must not build; report memory and time against forming it."""

import math

import torch
from torch.func import hessian
from torch.nn import functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

N_BIG = 1024  # the Hessian alone is 4 MB in float32; an HVP needs a few n-vectors
K_BIG = 4  # directions stacked in the second measurement at size


def _problem(ctx, n, m, dtype):
    """A regularised logistic loss with a coupling term: a dense Hessian with non-zero third
    derivatives (so a finite difference is visibly inexact). Returns f and its float64 twin."""
    a = ctx.randn(m, n, dtype=torch.float64) / math.sqrt(n)
    b = torch.where(ctx.randn(m, dtype=torch.float64) > 0, 1.0, -1.0).to(a)

    def make(dt):
        aa, bb = a.to(dt), b.to(dt)

        def f(w):
            z = aa @ w
            return (F.softplus(-bb * z).mean() + 0.05 * (w * w).sum()
                    + torch.tanh(w[:-1] * w[1:]).sum() + 0.1 * (w ** 3).sum())
        return f

    return make(dtype), make(torch.float64)


class _SquareWatch(TorchDispatchMode):
    """Records the first tensor an op produces with two dims of size n: an n x n matrix (under
    vmap/jvp the mode sees the physical, batched tensors, so hessian's n basis vectors show)."""

    def __init__(self, n):
        super().__init__()
        self.n, self.found = n, None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.found is None:
            for t in tree_leaves(out):
                if isinstance(t, torch.Tensor) and sum(d == self.n for d in t.shape) >= 2:
                    self.found = tuple(t.shape)
                    break
        return out


def _call(ctx, mine, f, x, v, where):
    watch = _SquareWatch(x.shape[0])
    try:
        with watch:
            out = ctx.no_mutation(mine.hvp, f, x, v)
    except (RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0].rstrip(".!") if str(exc).strip() else type(exc).__name__
        hint = (ctx.t(" v holds {k} directions, one per row: compute one product per row (vmap over v's first "
                      "dim, with x shared)", k=v.shape[0]) if v.dim() == 2 else "")
        ctx.fail(ctx.t("hvp(f, x, v) ({where}) raised: {error}.{hint}", where=where, error=first, hint=hint), [])
    # The reference's tensors are n-vectors, (k, n) stacks and the (m, n) data matrix; none of the
    # cases has k == n, so a tensor with two dims of size n is the Hessian (or a slice of it).
    ctx.expect(x.shape[0] == 1 or watch.found is None,
               ctx.t("hvp(f, x, v) ({where}) made a tensor of shape {shape}: your code builds the n x n matrix, "
                     "the Hessian (n={n}), which the task says never to build, even when n is small or there are "
                     "many directions. H @ v is the derivative of f's gradient along v: one jvp of grad(f) per "
                     "direction",
                     where=where, shape=watch.found, n=x.shape[0]))
    return out


def check(ctx):
    mine = ctx.learner
    # (n, k directions or None for one, dtype, non-contiguous v, x requires grad: a model's
    # parameter vector, whose flag must survive the call)
    cases = [(7, None, torch.float64, False, False), (1, None, torch.float64, False, False),
             (9, 3, torch.float64, True, True), (13, 1, torch.float32, False, False),
             (5, 4, torch.float32, False, True)]
    for trial in ctx.trials(len(cases)):
        n, k, dtype, noncontig, x_grad = cases[trial]
        f, f64 = _problem(ctx, n, 2 * n + 3, dtype)
        x = ctx.randn(n, dtype=dtype, requires_grad=x_grad)
        if k is None:
            v = ctx.randn(n, dtype=dtype)
        elif noncontig:
            v = ctx.randn(n, k, dtype=dtype).T  # (k, n), not contiguous
        else:
            v = ctx.randn(k, n, dtype=dtype)
        where = (ctx.t("n={n}, one direction, {dtype}", n=n, dtype=str(dtype)[6:]) if k is None
                 else ctx.t("n={n}, {k} directions, {dtype}", n=n, k=k, dtype=str(dtype)[6:]))
        where += ctx.t(", non-contiguous v") if noncontig else ""
        out = _call(ctx, mine, f, x, v, where)
        ctx.expect(x.requires_grad == x_grad and not v.requires_grad,
                   ctx.t("after hvp(f, x, v) ({where}) the caller's x or v requires grad: your code called "
                         "requires_grad_() on it. torch.func transforms need no requires_grad at all", where=where)
                   if not x_grad or v.requires_grad else
                   ctx.t("hvp(f, x, v) ({where}) was given an x that requires grad and left it not requiring grad: "
                         "your code changed the caller's requires_grad flag. torch.func transforms need no "
                         "requires_grad at all: leave x as it was", where=where))
        ctx.expect(isinstance(out, torch.Tensor),
                   ctx.t("hvp returned a {kind}, expected a tensor", kind=type(out).__name__))
        ctx.expect(tuple(out.shape) == tuple(v.shape),
                   ctx.t("hvp(f, x, v) ({where}) has shape {got}, expected v's shape {want}{why}",
                         where=where, got=tuple(out.shape), want=tuple(v.shape),
                         why=ctx.t(": a single number is the derivative of f along v; H @ v is the derivative "
                                   "of f's GRADIENT along v") if out.dim() == 0 else ""))
        ctx.expect(out.dtype == dtype, ctx.t("hvp turned {dtype} inputs into a {got} result: keep x's dtype",
                                             dtype=str(dtype)[6:], got=str(out.dtype)[6:]))
        # The truth: the float64 Hessian, formed here where it is small.
        h = hessian(f64)(x.detach().double())
        expected = (v.double() @ h).to(dtype)  # H is symmetric: row i of v @ H is H @ v[i]
        # A forward difference of the gradient (eps 1e-4) is off by ~1e-4 in float64; float32
        # rounding of an exact HVP stays below 1e-5.
        tol = {"atol": 1e-9, "rtol": 1e-7} if dtype == torch.float64 else {"atol": 2e-5, "rtol": 1e-4}
        ctx.expect_close(ctx.t("hvp(f, x, v) ({where}) against the float64 Hessian times v", where=where),
                         out.detach(), expected, **tol)

    # At size: the product must not go through the n x n matrix.
    ctx.phase(ctx.t("measuring memory at n={n_big}", n_big=N_BIG))
    f, _ = _problem(ctx, N_BIG, 64, torch.float32)
    x, v = ctx.randn(N_BIG), ctx.randn(N_BIG)
    hess_mb = N_BIG * N_BIG * 4 / 2**20
    peak = ctx.peak_memory(lambda: mine.hvp(f, x, v))
    # The reference peaks at ~0.3 MB (the vmap/jvp machinery's temporaries, the size of the
    # data matrix); anything that builds H (hessian, jacfwd(jacrev), a loop of n gradients
    # stacked) holds at least the 4 MB matrix, ~33 MB measured for hessian(f)(x) @ v.
    ctx.expect(peak < N_BIG * N_BIG * 4 / 2,
               ctx.t("hvp(f, x, v) at n={n} peaked at {peak:.1f} MB of tensor memory; the Hessian itself is "
                     "{hess:.1f} MB: your code builds the n x n matrix. Differentiate f's gradient along v "
                     "instead (memory proportional to n)", n=N_BIG, peak=peak / 2**20, hess=hess_mb))
    # The same with k stacked directions: ~K_BIG times the one-direction temporaries for the
    # reference (vmap of jvp), still far below the Hessian.
    vs = ctx.randn(K_BIG, N_BIG)
    peak = ctx.peak_memory(lambda: mine.hvp(f, x, vs))
    ctx.expect(peak < N_BIG * N_BIG * 4 / 2,
               ctx.t("hvp(f, x, v) at n={n} with {k} directions peaked at {peak:.1f} MB of tensor memory; the "
                     "Hessian itself is {hess:.1f} MB: your code builds the n x n matrix for several directions. "
                     "Compute one product per direction (vmap over v's rows), never H itself",
                     n=N_BIG, k=K_BIG, peak=peak / 2**20, hess=hess_mb))

    def formed():
        return hessian(f)(x) @ v

    compares = ctx.t("yours vs forming the Hessian at n={n}: torch.func.hessian(f)(x) @ v", n=N_BIG)
    sides = (ctx.t("yours"), ctx.t("forming the Hessian"))
    ctx.memory(lambda: mine.hvp(f, x, v), formed, compares=compares, sides=sides)
    ctx.time(lambda: mine.hvp(f, x, v), formed, compares=compares, sides=sides)
