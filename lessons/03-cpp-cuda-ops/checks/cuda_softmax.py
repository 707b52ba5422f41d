"""Check (CUDA): the learner's softmax kernel equals torch.softmax for column counts that are
not multiples of the block size, huge values and non-contiguous input; it rejects input it
cannot handle; and it is at least 5x faster than a one-thread-per-row kernel that this checker
builds itself. Reports the speedup over that kernel, and times against the reference solution
and torch.softmax."""

import torch
from _ch03_build import load_learner

MIN_SPEEDUP = 5.0  # a block-per-row kernel is typically 20-100x faster than one thread per row

# The "before" kernel: one thread per row (<<<rows, 1>>>). Correct, but each row is walked
# three times by a single thread.
NAIVE_CPP = r"""
#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/Exceptions.h>

void launch_naive_softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream);

at::Tensor softmax(const at::Tensor& x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() == 2, "naive softmax: bad input");
    const c10::cuda::CUDAGuard device_guard(x.device());
    const at::Tensor input = x.contiguous();
    at::Tensor out = at::empty_like(input);
    if (input.numel() == 0) return out;
    launch_naive_softmax(input.data_ptr<float>(), out.data_ptr<float>(), input.size(0), input.size(1),
                         c10::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

NAIVE_CUDA = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__global__ void naive_softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
    float* out = y + static_cast<int64_t>(blockIdx.x) * cols;
    float m = -INFINITY;
    for (int64_t j = 0; j < cols; ++j) m = fmaxf(m, row[j]);
    float sum = 0.0f;
    for (int64_t j = 0; j < cols; ++j) sum += expf(row[j] - m);
    for (int64_t j = 0; j < cols; ++j) out[j] = expf(row[j] - m) / sum;
}

void launch_naive_softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
    naive_softmax_kernel<<<static_cast<unsigned int>(rows), 1, 0, stream>>>(x, y, cols);
}
"""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _run(ctx, fn, x, what):
    """Call the learner's softmax and wait for the GPU, so a kernel fault is reported here."""
    try:
        out = fn(x)
        torch.cuda.synchronize()
        return out
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        msg = _first_line(exc)
        if "CUDA error" in msg or "illegal" in msg.lower():
            ctx.fail(ctx.t("your kernel failed on the GPU for {what}: {message}. Reads or writes past the end of "
                           "a row (a loop bound other than cols) are the usual cause; CUDA_LAUNCH_BLOCKING=1 and "
                           "compute-sanitizer pinpoint it", what=what, message=msg))
        ctx.fail(ctx.t("softmax(x) raised {error} for {what}: {message}.",
                       error=type(exc).__name__, what=what, message=msg))


def _expect_rows_sum_to_one(ctx, out, what):
    """Every row of a softmax sums to 1 (float32 rounding over 4097 columns stays below 1e-4). A
    block that divides by a partial sum (a reduction that stops inside each warp, or loops that
    leave columns out) gives rows that do not. A wrong output type or shape passes here and is
    reported by the expect_close that follows (the observation is made either way, so the two
    runs' observations pair)."""
    ok, count, rows, lo, hi = True, 0, 0, 1.0, 1.0
    if isinstance(out, torch.Tensor) and out.dim() == 2 and out.is_floating_point() and out.shape[0] > 0:
        sums = out.detach().double().cpu().sum(dim=1)
        off = ~((sums - 1).abs() <= 1e-3)  # NaN counts as off
        ok, count, rows = not bool(off.any()), int(off.sum()), out.shape[0]
        lo, hi = float(sums.min()), float(sums.max())
    ctx.expect(ok,
               ctx.t("the rows of softmax(x) for {what} do not sum to 1 ({count} of {rows} rows; their sums range "
                     "from {lo:.4g} to {hi:.4g}): each row must be divided by the sum over all of its columns: every "
                     "loop strides over all cols, and the reduction combines every warp of the block, not one "
                     "warp only",
                     what=what, count=count, rows=rows, lo=lo, hi=hi))


def check(ctx):
    mine = load_learner(ctx, ctx.t("building your CUDA extension (C++ compiler and nvcc)…"))

    # Column counts around the block size (256) and warp size (32), never all multiples of them.
    cols_list = [1, 7, 31, 33, 255, 257, 1000, 1025, 4097]
    for i in ctx.trials(len(cols_list), ctx.t("values, trial")):
        rows, cols = ctx.choice([1, 3, 64, 129]), cols_list[i]
        x = ctx.randn(rows, cols, scale=ctx.choice([1.0, 5.0]))
        described = ctx.t("x of shape {shape}", shape=(rows, cols))
        out = _run(ctx, mine.softmax, x, described)
        _expect_rows_sum_to_one(ctx, out, described)
        ctx.expect_close(ctx.t("softmax(x) for {what}", what=described), out, torch.softmax(x, dim=1))

    def near_minus_1000():
        return ctx.randn(9, ctx.choice([70, 300])) - 1000.0

    special = [
        (ctx.t("values of size ~1000 (x * 1000)"),
         lambda: ctx.randn(ctx.choice([8, 33]), ctx.choice([300, 2000]), scale=1000.0)),
        (ctx.t("every value near 1000 (x + 1000)"), lambda: ctx.randn(17, ctx.choice([100, 513])) + 1000.0),
        (ctx.t("every value near -1000 (x - 1000)"), near_minus_1000),
        (ctx.t("a transposed (non-contiguous) x"),
         lambda: ctx.randn(ctx.choice([40, 65]), ctx.choice([300, 777]), noncontiguous=True)),
        (ctx.t("an empty x (0 rows)"), lambda: ctx.randn(0, ctx.choice([5, 300]))),
    ]
    for i in ctx.trials(len(special), ctx.t("special inputs, trial")):
        what, make = special[i]
        x = make()
        out = _run(ctx, mine.softmax, x, what)
        if isinstance(out, torch.Tensor) and out.is_floating_point() and out.numel():
            bad = int((~torch.isfinite(out)).sum())
            if make is near_minus_1000:  # every exp underflows unless the row's true max is subtracted
                ctx.expect(bad == 0, ctx.t("softmax(x) for {what} has {bad} NaN or inf values: every expf "
                                           "underflowed to 0, so the max you subtracted is not the row's max (a max "
                                           "reduction that starts from, or pads idle lanes with, 0 instead of "
                                           "-INFINITY gives 0 for a row of negative values)", what=what, bad=bad))
            else:
                ctx.expect(bad == 0, ctx.t("softmax(x) for {what} has {bad} NaN or inf values: subtract the row "
                                           "max (reduced over the whole block) before expf", what=what, bad=bad))
        _expect_rows_sum_to_one(ctx, out, what)
        ctx.expect_close(ctx.t("softmax(x) for {what}", what=what), out, torch.softmax(x, dim=1))

    ctx.phase(ctx.t("checking that bad input is rejected"))
    x64 = ctx.randn(4, 5, dtype=torch.float64)
    ctx.expect_raises(ctx.t("a float64 input should raise an error"), lambda: mine.softmax(x64),
                      (RuntimeError, TypeError), match="float32")
    x3 = ctx.randn(2, 3, 4)
    ctx.expect_raises(ctx.t("a 3-D input should raise an error (TORCH_CHECK(x.dim() == 2, ...))"),
                      lambda: mine.softmax(x3), (RuntimeError, IndexError))

    naive = None
    with ctx.build(ctx.t("building the one-thread-per-row kernel to compare with…"), figure="naive_build_s",
                   label=ctx.t("building the one-thread-per-row kernel")):
        from torch.utils.cpp_extension import load_inline

        naive = load_inline(name="tutor_ch03_softmax_one_thread_per_row", cpp_sources=NAIVE_CPP,
                            cuda_sources=NAIVE_CUDA, functions=["softmax"], extra_cflags=["-O2"],
                            extra_cuda_cflags=["-O2"], no_implicit_headers=True)
    x = ctx.randn(8192, 1024)
    vs_naive = ctx.time(lambda: mine.softmax(x), lambda: naive.softmax(x), name="vs one thread per row",
                        label=ctx.t("time against one thread per row"),
                        compares=ctx.t("your kernel vs a kernel with one thread per row"),
                        sides=(ctx.t("yours"), ctx.t("one thread per row")))
    ctx.figure("speedup_vs_one_thread_per_row", vs_naive.speedup,
               label=ctx.t("speedup over one thread per row (at least {minimum:g}× expected)", minimum=MIN_SPEEDUP))
    ctx.time(lambda: mine.softmax(x), lambda: ctx.reference.softmax(x), name="time")
    ctx.time(lambda: mine.softmax(x), lambda: torch.softmax(x, dim=1), name="vs torch.softmax",
             label=ctx.t("time against torch.softmax"), compares=ctx.t("your softmax vs torch.softmax (ATen's)"),
             sides=(ctx.t("yours"), ctx.t("torch.softmax")))
    ctx.expect(vs_naive.speedup >= MIN_SPEEDUP,
               ctx.t("your kernel is correct but only {speedup:.1f}x as fast as one thread per row "
                     "({mine_ms:.3f} ms vs {naive_ms:.3f} ms on 8192 x 1024; at least {minimum:g}x is expected): "
                     "launch one block of threads per row and let them share the columns and both reductions",
                     speedup=vs_naive.speedup, mine_ms=vs_naive.learner_s * 1e3,
                     naive_ms=vs_naive.reference_s * 1e3, minimum=MIN_SPEEDUP))

    # Last, because a kernel handed a CPU pointer can leave the CUDA context unusable.
    ctx.phase(ctx.t("checking that a CPU tensor is rejected"))
    xc = torch.randn(3, 4, generator=ctx.generator)
    try:
        mine.softmax(xc)
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001
        msg = _first_line(exc)
        ctx.expect("CUDA error" not in msg and "illegal" not in msg.lower(),
                   ctx.t("a CPU tensor reached your kernel ({message}): TORCH_CHECK(x.is_cuda(), ...) before "
                         "launching", message=msg))
        ctx.expect("cuda" in msg.lower(),
                   ctx.t("a CPU tensor should be rejected with a message that mentions CUDA; it says: {message}",
                         message=msg))
    else:
        ctx.fail(ctx.t("a CPU tensor should raise an error: TORCH_CHECK(x.is_cuda(), ...) before launching"))
