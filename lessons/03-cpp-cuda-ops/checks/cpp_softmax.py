"""Check: the learner's C++ softmax equals torch.softmax over rows for awkward shapes, float32
and float64, non-contiguous input and huge values (where the naive formula gives NaN); it
rejects input it cannot handle; and it is timed against the reference and torch.softmax."""

import torch
from _ch03_build import load_learner


def _dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _call(ctx, fn, x, what):
    """Call the learner's softmax; an exception becomes a failure that says which input caused it."""
    try:
        return fn(x)
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if x.dtype == torch.float64:
            ctx.fail(ctx.t("softmax(x) raised {error} for {what}: {message}. Dispatch on the dtype with "
                           "AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), \"softmax\", [&] {{ ... }}) and use "
                           "scalar_t inside, so float32 and float64 both work.",
                           error=type(exc).__name__, what=what, message=first))
        ctx.fail(ctx.t("softmax(x) raised {error} for {what}: {message}.",
                       error=type(exc).__name__, what=what, message=first))


def check(ctx):
    mine = load_learner(ctx, ctx.t("building your C++ extension…"))
    f32, f64 = torch.float32, torch.float64

    cases = [
        # (description, rows, cols, scale, dtype, non-contiguous)
        (ctx.t("a single column"), ctx.choice([1, 3]), 1, 1.0, f32, False),
        (ctx.t("a small float32 x"), ctx.choice([7, 64]), ctx.choice([33, 129]), 3.0, f32, False),
        (ctx.t("a single row"), 1, ctx.choice([5, 100]), 3.0, f32, False),
        (ctx.t("many short rows"), 257, ctx.choice([2, 5]), 10.0, f32, False),
        (ctx.t("long rows"), ctx.choice([4, 9]), 4097, 1.0, f32, False),
        (ctx.t("a float64 x"), ctx.choice([13, 40]), ctx.choice([77, 300]), 5.0, f64, False),
        (ctx.t("a transposed (non-contiguous) x"), ctx.choice([31, 64]), ctx.choice([45, 100]), 3.0, f32, True),
        (ctx.t("no rows"), 0, ctx.choice([3, 8]), 1.0, f32, False),
    ]
    for i in ctx.trials(len(cases), ctx.t("values, trial")):
        what, rows, cols, scale, dtype, strided = cases[i]
        x = ctx.randn(rows, cols, scale=scale, dtype=dtype, noncontiguous=strided)
        described = ctx.t("{what} of shape {shape}", what=what, shape=(rows, cols))
        out = _call(ctx, lambda t: ctx.no_mutation(mine.softmax, t), x, described)
        ctx.expect_close(ctx.t("softmax(x) for {what}", what=described), out, torch.softmax(x, dim=1))

    # float64 precision: per row one dominant entry and 4096 small ones, so the sum is built from
    # thousands of additions to a number near 1. A max or sum held in float leaves errors of
    # 1e-6 to 5e-6 on the dominant probability (float64 tolerance: 1e-7); float64 ones ~1e-15.
    rows = ctx.choice([3, 6])
    x = ctx.randn(rows, 4097, dtype=f64)
    x[:, 0] += 12.0
    described = ctx.t("{what} of shape {shape}", what=ctx.t("a float64 x with one dominant entry per row"),
                      shape=(rows, 4097))
    out = _call(ctx, lambda t: ctx.no_mutation(mine.softmax, t), x, described)
    ctx.expect_close(ctx.t("softmax(x) for {what} (every intermediate, the running max and sum included, must be "
                           "float64 for a float64 x)", what=described), out, torch.softmax(x, dim=1))

    large = [
        (ctx.t("values of size ~1000 (x * 1000)"),
         lambda: ctx.randn(ctx.choice([8, 33]), ctx.choice([50, 1000]), scale=1000.0)),
        (ctx.t("every value near 1000 (x + 1000)"),
         lambda: ctx.randn(ctx.choice([5, 16]), ctx.choice([20, 333])) + 1000.0),
        (ctx.t("every value near -1000 (x - 1000)"),
         lambda: ctx.randn(ctx.choice([5, 16]), ctx.choice([20, 333])) - 1000.0),
    ]
    for i in ctx.trials(len(large), ctx.t("large values, trial")):
        what, make = large[i]
        x = make()
        described = ctx.t("an input with {what}", what=what)
        out = _call(ctx, mine.softmax, x, described)
        if isinstance(out, torch.Tensor) and out.is_floating_point():
            bad = int((~torch.isfinite(out)).sum())
            ctx.expect(bad == 0, ctx.t("softmax(x) for {what} has {bad} NaN or inf values: exp() overflowed. "
                                       "Subtract each row's max first: exp(x - max) is at most 1",
                                       what=described, bad=bad))
        ctx.expect_close(ctx.t("softmax(x) for {what}", what=described), out, torch.softmax(x, dim=1))

    # Masked positions: -inf entries get probability 0 and leave the rest a proper softmax.
    ctx.phase(ctx.t("values at the extremes"))
    x = ctx.randn(6, 9, scale=3.0)
    x[torch.rand(6, 9, generator=ctx.generator) < 0.3] = float("-inf")
    x[:, 0] = ctx.randn(6)  # every row keeps a finite value
    out = _call(ctx, mine.softmax, x, ctx.t("an input with -inf entries (masked positions)"))
    ctx.expect_close(ctx.t("softmax(x) for an input with -inf entries (masked positions: probability 0)"),
                     out, torch.softmax(x, dim=1))

    # A fully masked row (every entry -inf) and a row with a NaN: torch.softmax gives NaN for the
    # whole row (exp(-inf - -inf) is NaN; NaN poisons the sum); zeros or a made-up distribution do not.
    x = ctx.randn(5, 7, scale=3.0)
    x[1] = float("-inf")
    x[3, ctx.choice([0, 4, 6])] = float("nan")
    out = _call(ctx, mine.softmax, x, ctx.t("an input with a row of only -inf and a row with a NaN"))
    ctx.expect_close(ctx.t("softmax(x) for an input with a row of only -inf (fully masked) and a row with a NaN "
                           "(torch.softmax gives NaN for both whole rows)"), out, torch.softmax(x, dim=1))

    # 16-bit input is optional (refusing it is fine), but accepted it must be right: the running max
    # and sum held in bfloat16/float16 stall on long rows (adding ~0.05 to a sum of 32 is lost in
    # bfloat16's 8 bits); at::opmath_type<scalar_t> accumulates in float.
    for dtype in (torch.bfloat16, torch.float16):
        x16 = ctx.randn(ctx.choice([2, 5]), 4097).to(dtype)
        try:
            # Outside the call contract: the reference refuses 16-bit input, so its run makes no
            # contract observation here, and a learner's run that accepts it must not make one either.
            with ctx.uncontracted():
                out, raised = mine.softmax(x16), False
        except (RuntimeError, TypeError):
            out, raised = None, True
        want = torch.softmax(x16.float(), dim=1)
        if raised:
            got = ""
        elif isinstance(out, torch.Tensor) and out.dtype == dtype and out.shape == x16.shape:
            # bfloat16's tolerance (rtol 1.6e-2, atol 1e-5), also for float16: a stalled sum is off by far more.
            excess = ((out.float() - want).abs() - 1.6e-2 * want.abs() - 1e-5).max() if out.numel() else 0.0
            got = "" if bool(excess <= 0) else ctx.t("max error beyond the tolerance: {err:.3g}", err=float(excess))
        else:
            got = ctx.t("it returned {kind} {out_dtype} of shape {out_shape}", kind=type(out).__name__,
                        out_dtype=_dtype_name(getattr(out, "dtype", None)), out_shape=tuple(getattr(out, "shape", ())))
        ctx.expect(not got,
                   ctx.t("softmax(x) accepts a {dtype} x of shape {shape} but does not return torch.softmax(x, "
                         "dim=1) in {dtype} ({got}): hold the running max and sum in float "
                         "(at::opmath_type<scalar_t>), not in the 16-bit type, or refuse 16-bit input",
                         dtype=_dtype_name(dtype), shape=tuple(x16.shape), got=got))

    ctx.phase(ctx.t("checking that bad input is rejected"))
    x3 = ctx.randn(2, 3, 4)
    ctx.expect_raises(ctx.t("a 3-D input should raise an error (this softmax takes 2-D (rows, cols) tensors: "
                            "TORCH_CHECK(x.dim() == 2, ...))"), lambda: mine.softmax(x3), RuntimeError)
    xi = ctx.randint(0, 10, (4, 5))
    ctx.expect_raises(ctx.t("an int64 input should raise an error"), lambda: mine.softmax(xi), RuntimeError)
    meta = torch.empty(4, 5, device="meta")
    ctx.expect_raises(ctx.t("softmax of a tensor that is not on the CPU (here: on the `meta` device) should "
                            "raise an error"),
                      lambda: mine.softmax(meta), (RuntimeError, TypeError), match="cpu")

    # Threads: the task allows at::parallel_for, which uses the caller's thread count; it must not
    # change it (torch.set_num_threads is process-wide). A caller who chose one thread keeps one.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        x = ctx.randn(ctx.choice([64, 100]), 33)
        out = _call(ctx, mine.softmax, x, ctx.t("an input, called with torch.set_num_threads(1)"))
        ctx.expect(torch.get_num_threads() == 1,
                   ctx.t("softmax(x) changed the process-wide thread count from 1 (the caller's "
                         "torch.set_num_threads(1)) to {now}: at::parallel_for uses the threads the caller "
                         "chose; never call at::set_num_threads in an op", now=torch.get_num_threads()))
    finally:
        torch.set_num_threads(threads)
    ctx.expect_close(ctx.t("softmax(x) for an input, called with torch.set_num_threads(1)"), out,
                     torch.softmax(x, dim=1))

    x = ctx.randn(512, 1024)
    ctx.time(lambda: mine.softmax(x), lambda: ctx.reference.softmax(x), name="time")
    ctx.time(lambda: mine.softmax(x), lambda: torch.softmax(x, dim=1), name="vs torch.softmax",
             label=ctx.t("time against torch.softmax"), compares=ctx.t("your softmax vs torch.softmax (ATen's)"),
             sides=(ctx.t("yours"), ctx.t("torch.softmax")))
