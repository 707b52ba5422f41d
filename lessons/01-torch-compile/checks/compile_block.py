"""Check: time_per_call leaves out the compiling first call and waits for the GPU; compile_block
compiles the block with Inductor as one graph and matches eager; should_compile weighs the
compile against what the job's calls save; compile_cost measures a real compile (Dynamo's own
metric of the same call is the yardstick) and the steady state of both sides, on three jobs:
the block on a small batch (about as fast compiled as eager on a CPU), a hand-written RMSNorm and
gated activation on a big batch (2-4x faster compiled: a dozen elementwise ops fused into a loop
or two) and one row through a tiny Linear (about 3x slower compiled: Dynamo's per-call cost is
more than the work). Reports every job's figures, the learner's beside the reference's, and the
check's own interleaved timing of compiled against eager."""

import contextlib
import math
import statistics
import time

import torch
import torch.nn as nn
from _recompiles import compiler_config, expect_config_kept
from torch._dynamo.utils import compilation_time_metrics, counters

COMPILING = "_compile.compile_inner"  # Dynamo's metric: seconds spent compiling each frame
COST_KEYS = ("compile_s", "eager_s", "compiled_s", "break_even_calls")


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


class _Elementwise(nn.Module):
    """A hand-written RMSNorm and a gated activation: a dozen elementwise ops and a mean, no
    matrix multiplication. Eager mode makes a pass over memory per op; Inductor fuses them into
    a loop or two, so compiling pays here even on a small CPU."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight
        return h * torch.sigmoid(1.702 * h) + 0.1 * torch.tanh(h)


class _CountsEagerCalls:
    """Mixed into a module class: counts the calls that ran its Python forward, i.e. the eager
    ones. Dynamo traces forward with torch.compiler.is_compiling() true, so the count stays out
    of the graph and a compiled call leaves it alone."""

    eager_calls = 0
    # The shortest eager forward, in seconds: no honest eager_s (mean, median or min of calls that
    # each ran this forward) is below it, whatever else the machine is doing.
    fastest_eager_s = math.inf

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.compiler.is_compiling():
            return super().forward(x)
        self.eager_calls += 1
        start = time.perf_counter()
        out = super().forward(x)
        self.fastest_eager_s = min(self.fastest_eager_s, time.perf_counter() - start)
        return out


def _counted(cls: type) -> type:
    return type(cls.__name__, (_CountsEagerCalls, cls), {"__module__": __name__})


def _compiling(fn):
    """fn()'s result and the seconds Dynamo and Inductor spent compiling while it ran, by their
    own metric (which counts a compile served by Inductor's on-disk cache too, at its cost)."""
    before = compilation_time_metrics.get(COMPILING)
    seen = len(before) if before is not None else 0
    result = fn()
    after = compilation_time_metrics.get(COMPILING) or []
    # torch.compiler.reset() clears the metrics: then every entry is from this call.
    added = after[seen:] if after is before else after
    return result, float(sum(added))


def _real(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)


def _ms(seconds: float) -> float:
    return seconds * 1e3


def _check_decisions(ctx, mine) -> None:
    """should_compile on costs with known answers, made so that each half-right rule fails one:
    ignoring the compile (A), comparing the compile with the eager job alone (B), and a compiled
    model that is slower per call, where no job is long enough (C)."""
    ctx.phase(ctx.t("checking should_compile on known costs"))
    g = ctx.generator
    scale = 0.5 + 1.5 * torch.rand((), generator=g).item()  # fresh numbers each seed, same answers
    k = round(1.0 + 2.0 * torch.rand((), generator=g).item(), 2)
    cases = [
        # compiled twice as fast: repaid after k / 5 ms = 200 k calls
        (dict(compile_s=k, eager_s=0.010 * scale, compiled_s=0.005 * scale), (0.25, 5.0)),
        # compiled 10 % faster: repaid after k / 1 ms = 1000 k calls; a job of 250 k calls runs
        # 2.5 k s of eager work, longer than the compile, yet saves only k / 4
        (dict(compile_s=k, eager_s=0.010 * scale, compiled_s=0.009 * scale), (0.25, 5.0)),
        # compiled slower per call: never repaid
        (dict(compile_s=k / 4, eager_s=0.001 * scale, compiled_s=0.002 * scale), (1e3, 1e6)),
    ]
    for cost, jobs in cases:
        saved = cost["eager_s"] - cost["compiled_s"]
        cost["break_even_calls"] = cost["compile_s"] / saved if saved > 0 else math.inf
        for factor in jobs:
            be = cost["break_even_calls"]
            calls = int(factor * be) if math.isfinite(be) else int(factor)
            _judge_decision(ctx, mine, dict(cost), calls, ctx.t("the costs given to it"))


def _judge_decision(ctx, mine, cost: dict, calls: int, whose: str) -> None:
    """mine.should_compile(cost, calls) against the arithmetic: compile_s + calls * compiled_s
    (the first call's work included) against calls * eager_s."""
    answer = mine.should_compile(dict(cost), calls)
    ctx.expect(isinstance(answer, bool),
               ctx.t("should_compile must return True or False, it returned {kind}", kind=type(answer).__name__))
    k, e, c = cost["compile_s"], cost["eager_s"], cost["compiled_s"]
    compiled_job, eager_job = k + calls * c, calls * e
    right = compiled_job < eager_job
    if answer and not right and c >= e:
        reason = ctx.t("should_compile said to compile for a job of {calls} calls with {whose}, but the compiled "
                       "model is not faster ({c:.3g} ms a call compiled, {e:.3g} ms eager): compiling only adds its "
                       "{k:.3g} s", calls=calls, whose=whose, c=_ms(c), e=_ms(e), k=k)
    elif answer and not right:
        reason = ctx.t("should_compile said to compile for a job of {calls} calls with {whose}: the compile costs "
                       "{k:.3g} s and each call saves {saved:.3g} ms, {total:.3g} s over the whole job, so the job "
                       "finishes sooner in eager mode ({eager:.3g} s against {compiled:.3g} s compiled)",
                       calls=calls, whose=whose, k=k, saved=_ms(e - c), total=calls * (e - c),
                       eager=eager_job, compiled=compiled_job)
    else:
        reason = ctx.t("should_compile said not to compile for a job of {calls} calls with {whose}, though the "
                       "compile ({k:.3g} s) is repaid after {be:.0f} calls: compiled, the job takes {compiled:.3g} s "
                       "against {eager:.3g} s eager", calls=calls, whose=whose, k=k,
                       be=cost["break_even_calls"], compiled=compiled_job, eager=eager_job)
    ctx.expect(bool(answer) == right, reason)


def _check_cost(ctx, mine, key: str, label: str, model: nn.Module, x: torch.Tensor, warmup: int, iters: int,
                metric_works: bool) -> None:
    """compile_cost on one job: a real compile, timed where it happens; the steady state of both
    sides; a break-even that follows from them; decisions that follow from the break-even.
    `key` names the job's figures (the same in every language), `label` is the job in words."""
    ctx.phase(ctx.t("measuring compile_cost: {label}", label=label))
    model.eager_calls, model.fastest_eager_s = 0, math.inf
    config = compiler_config()
    cost, compiling_s = _compiling(lambda: mine.compile_cost(model, x, warmup=warmup, iters=iters))
    eager_calls, fastest_eager_s = model.eager_calls, model.fastest_eager_s
    # What the contract does not see: torch.compiler.config, which Inductor's cache switches alias.
    expect_config_kept(ctx, config, "compile_cost")
    shaped = isinstance(cost, dict) and all(key in cost for key in COST_KEYS)
    ctx.expect(shaped, ctx.t("compile_cost must return a dict with the keys compile_s, eager_s, compiled_s and "
                             "break_even_calls; it returned {what}",
                             what=sorted(cost) if isinstance(cost, dict) else type(cost).__name__))
    if not shaped:
        return
    k, e, c, be = (cost[key] for key in COST_KEYS)
    ctx.expect(all(_real(v) for v in (k, e, c, be)) and k >= 0 and e > 0 and c > 0,  # be: judged below
               ctx.t("compile_cost returned {cost} for {label}: the times must be positive numbers of seconds and "
                     "break_even_calls a number of calls (math.inf for never)", cost=cost, label=label))
    if not all(_real(v) for v in (k, e, c, be)):
        return

    # eager_s timed the eager model: no call of it took less than its shortest forward. (On a GPU
    # a forward only queues kernels, so this bound is loose there; the timing below still judges.)
    # (One expectation whatever the figures: the learner's run and the reference's pair them.)
    swapped = ctx.device.type == "cpu" and c >= fastest_eager_s and e < 0.8 * fastest_eager_s
    ctx.expect(not swapped,
               ctx.t("compile_cost returned eager_s = {e:.3g} ms for {label}, but no eager call of the model "
                     "took less than {fastest:.3g} ms while compile_cost ran, and compiled_s = {c:.3g} ms is "
                     "that slow: are eager_s and compiled_s swapped?",
                     e=_ms(e), c=_ms(c), fastest=_ms(fastest_eager_s), label=label))
    if getattr(ctx.channel, "measures_speed", True):
        # The learner's run: the check's own interleaved timing of compiled against eager, judged
        # before the compile figures, so that a swap is reported as the swap (a swapped eager_s
        # also shifts compile_s by eager_s - compiled_s, which alone can fail the figures below).
        _time_and_judge_swap(ctx, key, label, model, x, e, c)
    # A compile happened inside compile_cost, and compile_s is what it cost.
    if metric_works:
        ctx.expect(compiling_s > 0.002,
                   ctx.t("compile_cost measured no compile for {label}: Dynamo and Inductor spent no time compiling "
                         "while it ran. This model's code was already compiled earlier in this process (the check "
                         "compiled it), and a new torch.compile(...) wrapper reuses that code, so its first call "
                         "compiles nothing. Make Dynamo forget what it compiled before measuring.", label=label))
        # compile_s is the first call less one steady call: which of the two steady times it took
        # off is a question for the swap (above), so |eager_s - compiled_s| is allowed here. A
        # compile_s that timed only the wrapping (about 0 ms) still fails by the whole compile.
        ctx.expect(k + abs(e - c) >= 0.5 * compiling_s,
                   ctx.t("compile_cost reported compile_s = {ms:.2f} ms for {label}, but Dynamo and Inductor spent "
                         "{s:.3f} s compiling while it ran: torch.compile(...) returns before compiling anything, "
                         "and the compile happens inside the first call of the compiled model. Time that call, "
                         "before anything else calls the compiled model.", ms=_ms(k), s=compiling_s, label=label))
        ctx.expect(k <= 2 * compiling_s + 0.5,
                   ctx.t("compile_cost reported compile_s = {k:.3f} for {label}, but Dynamo and Inductor spent only "
                         "{s:.3f} s compiling while it ran: compile_s is the seconds (not milliseconds) that the "
                         "first call took beyond an ordinary call", k=k, s=compiling_s, label=label))
    # Both steady states were measured, each on its own side.
    ctx.expect(iters <= eager_calls <= warmup + iters + 3,
               ctx.t("compile_cost ran the eager model {n} times for {label} (warmup={warmup}, iters={iters}): "
                     "eager_s is time_per_call of the model itself, and compiled_s time_per_call of the compiled "
                     "model, each with warmup + iters calls", n=eager_calls, warmup=warmup, iters=iters, label=label))
    # The break-even follows from the learner's own figures.
    if e > c:
        exact = k / (e - c)
        ok = exact * (1 - 1e-6) - 1e-9 <= be <= exact * (1 + 1e-6) + 1  # rounding up to whole calls is fine
        reason = ctx.t("compile_cost returned break_even_calls = {be:.4g} for {label}, but its own figures give "
                       "{exact:.4g}: each compiled call saves eager_s - compiled_s = {saved:.3g} ms, and the "
                       "compile ({k:.3g} s) is repaid when those savings add up to compile_s",
                       be=be, exact=exact, saved=_ms(e - c), k=k, label=label)
    else:
        ok = be == math.inf
        reason = ctx.t("compile_cost returned break_even_calls = {be:.4g} for {label}, where the compiled model "
                       "is not faster ({c:.3g} ms a call against {e:.3g} ms eager): a compile that saves nothing "
                       "is never repaid, so the answer is math.inf", be=be, c=_ms(c), e=_ms(e), label=label)
    ctx.expect(ok, reason)

    # The decision on this job's own figures, for a job far shorter and one far longer than the
    # break-even (or, when it never pays, a short and an endless one).
    jobs = (max(1, int(be / 20)), int(math.ceil(be * 20)) + 1) if math.isfinite(be) else (10, 10**9)
    whose = ctx.t("your compile_cost figures for {label}", label=label)
    for calls in jobs:
        _judge_decision(ctx, mine, dict(cost), calls, whose)

    if getattr(ctx.channel, "measures_speed", True):
        # The learner's figures beside the compiler's own metric of the same call (the check's
        # interleaved timing of compiled against eager is reported above). Running the
        # reference's compile_cost here too would cost a compile and its timing loops per job.
        row = {"compile_s": k, "compiler_metric_s": compiling_s, "eager_ms": _ms(e), "compiled_ms": _ms(c),
               "speedup": e / c, "break_even_calls": be}
        repaid = ctx.t("repaid after {n:,.0f} call(s)", n=be) if math.isfinite(be) else ctx.t("never repaid")
        ctx.figure(f"{key}: your compile_cost", row, label=ctx.t(
            "{label}, {who}: compile {compile_s:.3f} s (the compiler counted {compiler_metric_s:.3f} s), a call "
            "{eager_ms:.3g} ms eager and {compiled_ms:.3g} ms compiled ({speedup:.2f}× as fast), {repaid}",
            label=label, who=ctx.t("your compile_cost"), repaid=repaid, **row))


def _time_and_judge_swap(ctx, key: str, label: str, model: nn.Module, x: torch.Tensor, e: float, c: float) -> None:
    """The check's own interleaved timing of compiled against eager (one thread, after warm-up);
    a learner's speedup that says the opposite by a wide margin is a swap. The model's code is
    compiled already (compile_cost just did it), so this compiles nothing more unless the
    learner's compile_block compiled differently from the reference's."""
    compiled = ctx.reference.compile_block(model)
    compiled(x)
    timing = ctx.time(lambda: compiled(x), lambda: model(x), name=f"{key}: compiled vs eager",
                      label=ctx.t("{label}: compiled vs eager", label=label),
                      compares=ctx.t("timed by the check"), sides=(ctx.t("compiled"), ctx.t("eager")))
    yours = e / c
    # Only a wide gap is judged (a fact of the learner's run alone, so ctx.fail, not an
    # observation the reference run would not pair): the learner's figures say the opposite.
    if not timing.noisy and ((timing.speedup < 0.6 and yours > 1.25) or (timing.speedup > 1.6 and yours < 0.8)):
        ctx.fail(ctx.t("your compile_cost found the compiled model {yours:.2f}x as fast as eager for {label}, "
                       "but the check timed it at {check:.2f}x: are eager_s and compiled_s swapped?",
                       yours=yours, check=timing.speedup, label=label))


def check(ctx):
    config = compiler_config()  # before the learner's file is imported
    mine = ctx.learner
    _check_time_per_call(ctx, mine)
    _check_decisions(ctx, mine)

    torch.manual_seed(ctx.seed)
    dim, heads = 64, 4
    Block = _counted(ctx.reference.Block)
    block = Block(dim, heads).to(ctx.device).eval()
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
        with ctx.build(compiling, figure="compile_s", label=ctx.t("compiling your block (first call)")):
            compiled = mine.compile_block(block)
            ctx.expect(callable(compiled), ctx.t("compile_block must return the compiled block (a callable), "
                                                 "it returned {kind}", kind=type(compiled).__name__))
            out, first_compile_s = _compiling(lambda: compiled(x))  # the first call compiles
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

        # What compiling costs, on three jobs. The block on the small batch was compiled above, so
        # a compile_cost that does not make Dynamo forget measures no compile at all.
        ctx.channel.quiet()  # the learner's run: measured without the reference run's load
        metric_works = first_compile_s > 0  # Dynamo's metric exists in this torch
        # The caller's settings must come back as they went in, so they go in both ways: the block
        # in eval mode, the other two models in training mode, and the last job with autograd on
        # (and parameters that require grad), so a compile_cost that switches the model to eval()
        # or turns grad mode off for its timing leaves a change the call contract sees.
        wide = _counted(_Elementwise)(256).to(ctx.device).train()
        row = _counted(nn.Linear)(8, 8).to(ctx.device).train()
        # A job's figures are named in English (their keys in history and --json), the job in
        # the learner's words beside them.
        block_shape, wide_shape = (batch, seq, dim), (16, 256, 256)
        jobs = [
            (f"the block {block_shape}", ctx.t("the block {shape}", shape=block_shape), block, x, 3, 50, False),
            (f"elementwise norm {wide_shape}", ctx.t("elementwise norm {shape}", shape=wide_shape), wide,
             ctx.randn(*wide_shape), 2, 10, False),
            ("Linear(8, 8) on one row", ctx.t("Linear(8, 8) on one row"), row, ctx.randn(1, 8), 10, 5000, True),
        ]
        for key, label, model, inputs, warmup, iters, grad in jobs:
            with torch.enable_grad() if grad else contextlib.nullcontext():
                _check_cost(ctx, mine, key, label, model, inputs, warmup, iters, metric_works)
    expect_config_kept(ctx, config, ctx.t("your code"))
