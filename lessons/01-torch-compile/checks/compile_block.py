"""Check: compile_block compiles the block with Inductor as one graph and matches eager;
time_per_call leaves out the compiling first call and waits for the GPU. Reports the compile
time and the steady-state speed of the compiled block against eager and against the reference."""

import statistics
import time

import torch
import torch.nn as nn
from torch._dynamo.utils import counters


class _Chatty(nn.Module):
    """A tiny module with a graph break (print) in the middle of its forward."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        print("a print() in forward is a graph break")
        return torch.relu(y)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


class _FakeGPU:
    """A CPU stand-in for an asynchronous GPU: a call "launches" `work_s` of kernels and returns
    at once; synchronize() waits until the queue has drained. While it is installed,
    torch.cuda.is_available() says True and torch.cuda.synchronize() (and the torch.accelerator
    equivalents) wait for this queue, so a clock read without synchronizing shows on CPU too."""

    def __init__(self, work_s: float) -> None:
        self.work_s = work_s
        self.busy_until = 0.0
        self.overslept = 0.0  # how much longer than asked the waits took (a loaded machine)

    def launch(self) -> None:
        self.busy_until = max(self.busy_until, time.perf_counter()) + self.work_s

    def synchronize(self, *args, **kwargs) -> None:
        begin = time.perf_counter()
        wait = self.busy_until - begin
        if wait > 0:
            time.sleep(wait)
            self.overslept += max(0.0, time.perf_counter() - begin - wait)

    def __enter__(self) -> "_FakeGPU":
        self._saved = [(torch.cuda, "is_available", torch.cuda.is_available),
                       (torch.cuda, "synchronize", torch.cuda.synchronize)]
        torch.cuda.is_available = lambda: True
        torch.cuda.synchronize = self.synchronize
        accelerator = getattr(torch, "accelerator", None)
        if accelerator is not None:
            for name, fake in (("is_available", lambda: True), ("synchronize", self.synchronize)):
                if hasattr(accelerator, name):
                    self._saved.append((accelerator, name, getattr(accelerator, name)))
                    setattr(accelerator, name, fake)
        return self

    def __exit__(self, *exc) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self.synchronize()


def _check_time_per_call(ctx, mine) -> None:
    ctx.phase(ctx.t("checking time_per_call"))
    spans: list[tuple[float, float]] = []  # (start, end) of every call, read inside the call
    first_s, steady_s = 0.5, 0.003

    def compiles_on_first_call() -> None:
        # Like a compiled function: the first call is slow (it compiles), later calls are fast.
        begin = time.perf_counter()
        time.sleep(first_s if not spans else steady_s)
        spans.append((begin, time.perf_counter()))

    # As many warm-up calls as timed ones: dividing by warmup + iters halves the answer.
    warmup, iters = 6, 6
    t = mine.time_per_call(compiles_on_first_call, warmup=warmup, iters=iters)
    ctx.expect(isinstance(t, float), ctx.t("time_per_call must return a float (seconds per call), it returned {kind}",
                                           kind=type(t).__name__))
    # What the calls took on this machine, now: a loaded machine oversleeps, so every figure
    # below is measured rather than taken from the sleep times asked for.
    durations = [b - a for a, b in spans]
    first = durations[0] if durations else first_s
    steady = statistics.median(durations[1:]) if len(durations) > 1 else steady_s
    if t > 4 * steady:
        first_timed = (first + (iters - 1) * steady) / iters
        total = iters * steady
        if abs(t - first_timed) < abs(t - total):
            ctx.fail(ctx.t("time_per_call returned {ms:.1f} ms for a function that takes {steady:.0f} ms per call "
                           "after a {first:.0f} ms first call: the first (compiling) call was timed. Run the warm-up "
                           "calls before starting the clock.", ms=t * 1e3, steady=steady * 1e3, first=first * 1e3))
        if abs(t - total) < 0.5 * total:
            ctx.fail(ctx.t("time_per_call returned {ms:.1f} ms for a function that takes {steady:.0f} ms per call: "
                           "return the time of one call (divide the total by iters), not the total",
                           ms=t * 1e3, steady=steady * 1e3))
    ctx.expect(len(spans) == warmup + iters,
               ctx.t("time_per_call(fn, warmup={warmup}, iters={iters}) called fn {n} times; expected {total} "
                     "({warmup} untimed warm-up calls, then {iters} timed ones)",
                     warmup=warmup, iters=iters, n=len(spans), total=warmup + iters))
    # The timed calls ran from the start of the first to the end of the last, and spent `busy`
    # inside fn: a correct answer lies between the two per call (plus a little loop overhead),
    # whatever the machine's load. Dividing by warmup + iters gives half of it.
    window = (spans[-1][1] - spans[warmup][0]) / iters
    busy = sum(durations[warmup:]) / iters
    ctx.expect(t <= 1.5 * window + 0.002,
               ctx.t("time_per_call returned {ms:.1f} ms for a function that takes {steady:.0f} ms per call",
                     ms=t * 1e3, steady=window * 1e3))
    if abs(t - busy * iters / (warmup + iters)) < 0.25 * busy:
        too_short = ctx.t("time_per_call returned {ms:.2f} ms for a function that sleeps {steady:.0f} ms per call: "
                          "divide by the number of timed calls (iters), not by warmup + iters",
                          ms=t * 1e3, steady=busy * 1e3)
    else:
        too_short = ctx.t("time_per_call returned {ms:.2f} ms for a function that sleeps {steady:.0f} ms per call: "
                          "it must time the calls themselves", ms=t * 1e3, steady=busy * 1e3)
    ctx.expect(t >= 0.95 * busy, too_short)

    # The GPU's queue, simulated on CPU: each call queues 10 ms of work and returns at once.
    ctx.phase(ctx.t("checking time_per_call on a simulated GPU queue"))
    work_s = 0.010
    with _FakeGPU(work_s) as gpu:
        t = mine.time_per_call(gpu.launch, warmup=warmup, iters=iters)
    ctx.expect(isinstance(t, float) and t >= 0.8 * work_s,
               ctx.t("on a GPU (simulated here: each call queues {work:.0f} ms of kernels and returns at once), "
                     "time_per_call measured {ms:.3f} ms per call: the clock stopped before the queued kernels ran. "
                     "When torch.cuda.is_available(), wait for them (torch.cuda.synchronize()) before reading the "
                     "clock.", work=work_s * 1e3, ms=t * 1e3))
    ctx.expect(t <= 1.5 * work_s + gpu.overslept / iters,
               ctx.t("on a GPU (simulated here: each call queues {work:.0f} ms of kernels and returns at once), "
                     "time_per_call measured {ms:.1f} ms per call: the warm-up's queued kernels were still running "
                     "when the clock started. Synchronize before starting the clock too.",
                     work=work_s * 1e3, ms=t * 1e3))

    if ctx.device.type == "cuda":
        # Kernel launches return at once; without synchronize() the clock measures only the launches.
        a = ctx.randn(4096, 4096)
        b = ctx.randn(4096, 4096)

        def gpu_work() -> None:
            for _ in range(8):
                a @ b

        gpu_work()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            gpu_work()
        end.record()
        torch.cuda.synchronize()
        gpu_s = start.elapsed_time(end) / 1000 / 5
        t = mine.time_per_call(gpu_work, warmup=2, iters=5)
        ctx.expect(t >= 0.5 * gpu_s,
                   ctx.t("time_per_call measured {ms:.3f} ms for GPU work that takes {gpu:.2f} ms: the clock stopped "
                         "before the kernels ran. Call torch.cuda.synchronize() before starting and before stopping "
                         "the clock.", ms=t * 1e3, gpu=gpu_s * 1e3))


def check(ctx):
    mine = ctx.learner
    _check_time_per_call(ctx, mine)

    torch.manual_seed(ctx.seed)
    dim, heads = 64, 4
    block = ctx.reference.Block(dim, heads).to(ctx.device).eval()
    # One fixed, odd shape (fresh values every run): Inductor caches compiled kernels on disk by
    # graph and shape, so a second check of the same code skips most of the compile.
    batch, seq = 5, 37
    x = ctx.randn(batch, seq, dim)
    tol = dict(atol=1e-4, rtol=1e-4) if ctx.device.type == "cpu" else dict(atol=1e-3, rtol=1e-3)

    with torch.no_grad():
        expected = block(x)
        torch._dynamo.reset()
        counters.clear()
        backend = "Triton" if ctx.device.type == "cuda" else "C++"
        compiling = ctx.t("compiling your block with Inductor ({backend} kernels)…", backend=backend)
        with ctx.build(compiling, figure="compile_s"):
            compiled = mine.compile_block(block)
            ctx.expect(callable(compiled), ctx.t("compile_block must return the compiled block (a callable), "
                                                 "it returned {kind}", kind=type(compiled).__name__))
            out = compiled(x)  # the first call compiles
            _sync(ctx.device)
        graphs = counters["stats"]["unique_graphs"]
        ctx.expect(graphs >= 1, ctx.t("calling what compile_block returned compiled nothing: it runs in eager "
                                      "mode. Return torch.compile(block, ...)."))
        ctx.expect(sum(counters["inductor"].values()) > 0,
                   ctx.t("your block was captured but not compiled by Inductor: use the default backend "
                         "(backend=\"inductor\"); \"eager\" and \"aot_eager\" are for debugging and make nothing "
                         "faster"))
        ctx.expect_close("output of the compiled block", out, expected, **tol)
        for _ in ctx.trials(2, ctx.t("checking fresh inputs")):
            x2 = ctx.randn(batch, seq, dim)
            ctx.expect_close("output of the compiled block", compiled(x2), block(x2), **tol)
        ctx.expect(counters["stats"]["unique_graphs"] == graphs,
                   ctx.t("calling the compiled block again with the same shapes compiled it again: "
                         "something in compile_block changes between calls"))

        ctx.phase(ctx.t("checking that a graph break is an error"))
        chatty = _Chatty(dim).to(ctx.device).eval()
        try:
            mine.compile_block(chatty)(x)
            raised = None
        except Exception as exc:  # torch._dynamo.exc.Unsupported under fullgraph=True
            raised = exc
        ctx.expect(raised is not None,
                   ctx.t("compile_block let a graph break through: a module whose forward calls print() "
                         "compiled without an error, split into two graphs. Pass fullgraph=True so that a graph "
                         "break raises instead of quietly costing speed."))

        with ctx.build(ctx.t("compiling the reference…"), figure="reference_compile_s"):
            reference = ctx.reference.compile_block(block)
            reference(x)
            _sync(ctx.device)
        ctx.time(lambda: compiled(x), lambda: block(x), name="compiled vs eager")
        ctx.time(lambda: compiled(x), lambda: reference(x), name="compiled vs reference")
