"""Check: selective_forward matches the plain stack (output, every parameter's gradient, the
input's gradient when it requires one); in backward it reruns no matmul but does rerun the
blocks' cheap ops (ATen ops counted with a TorchDispatchMode around backward, against the plain
stack's own backward); and the peak memory of a training step stays near the reference's,
between full checkpointing and none."""

import torch
from torch.utils.checkpoint import CheckpointPolicy, SelectiveCheckpointContext, checkpoint

from _ops import backward_ops, extra

aten = torch.ops.aten
MATMULS = ("aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm")
CHEAP = ("aten.native_layer_norm", "aten.gelu")
SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
# Measured on the 4-block stack below (CPU profiler, deterministic bytes): the plain step peaks
# at 2.31 MiB, 41% above the reference's 1.64 MiB; full checkpointing at 0.88 MiB (and it reruns
# one matmul per block); a policy that keeps every op's output peaks above plain. The matmul and
# cheap-op counts catch the half-right policies first; this bound is the backstop for the memory.
MAX_OVER_REFERENCE = 1.25


def _forward(ctx, fn, stack, x):
    """fn(stack, x), with the classic ways of wiring up context_fn explained."""
    try:
        return fn(stack, x)
    except ValueError as exc:
        if "context_fn" not in str(exc):
            raise
        ctx.fail(ctx.t("selective_forward raised: {error}. A policy only works with the non-reentrant "
                       "checkpoint: the reentrant one (use_reentrant=True, still what checkpoint uses when the "
                       "argument is left out) reruns the block inside a nested backward and has nowhere to "
                       "apply context_fn. Pass use_reentrant=False together with context_fn",
                       error=str(exc).rstrip(".")))
    except TypeError as exc:
        if "'tuple' object is not callable" in str(exc):
            ctx.fail(ctx.t("selective_forward raised: {error}. context_fn must be a function that checkpoint "
                           "calls once per block to get a fresh pair of contexts; "
                           "create_selective_checkpoint_contexts(policy) is that pair itself. Pass "
                           "functools.partial(create_selective_checkpoint_contexts, policy)",
                           error=str(exc).rstrip(".")))
        if "required positional argument" in str(exc):
            ctx.fail(ctx.t("selective_forward raised: {error}. checkpoint calls context_fn with no arguments, "
                           "so the policy itself cannot be context_fn: pass "
                           "functools.partial(create_selective_checkpoint_contexts, policy)",
                           error=str(exc).rstrip(".")))
        raise


def _grads(stack):
    return {name: (None if p.grad is None else p.grad.detach().clone()) for name, p in stack.named_parameters()}


def _backward_ops(ctx, forward, stack, x, g):
    """The ATen ops that run during backward of forward(stack, x)."""
    return backward_ops(lambda s, inp: _forward(ctx, forward, s, inp), stack, x, g)


def _full(stack, x):
    h = x
    for block in stack:
        h = checkpoint(block, h, use_reentrant=False)
    return h


def _policy_says(ctx, mine, op, args):
    """What the learner's `policy` returns for `op` (None when there is no usable policy). Outside
    the call contract: diagnoses call it in the learner's run only."""
    fn = getattr(mine, "policy", None)
    if not callable(fn):
        return None
    try:
        with ctx.uncontracted():
            got = fn(SelectiveCheckpointContext(is_recompute=False), op, *args)
    except Exception:  # noqa: BLE001 - a policy that cannot be probed gets the generic advice
        return None
    if isinstance(got, bool):  # checkpoint accepts True/False as MUST_SAVE/PREFER_RECOMPUTE
        got = CheckpointPolicy.MUST_SAVE if got else CheckpointPolicy.PREFER_RECOMPUTE
    return got if isinstance(got, CheckpointPolicy) else None


def _why_matmuls(ctx, mine):
    """The usual cause of a rerun matmul, read from the learner's own policy."""
    a, b, bias = torch.zeros(4, 3), torch.zeros(3, 5), torch.zeros(5)
    addmm = _policy_says(ctx, mine, aten.addmm.default, (bias, a, b))
    mm = _policy_says(ctx, mine, aten.mm.default, (a, b))
    gelu = _policy_says(ctx, mine, aten.gelu.default, (a,))
    if addmm in SAVE:
        return ctx.t("your policy says {got} for torch.ops.aten.addmm.default, yet backward reran it, so the "
                     "blocks were not checkpointed with that policy: pass context_fn=functools.partial("
                     "create_selective_checkpoint_contexts, policy) to checkpoint", got=addmm)
    if addmm is None:
        return ctx.t("return CheckpointPolicy.MUST_SAVE for the matmul ops (torch.ops.aten.mm.default, "
                     "torch.ops.aten.addmm.default) and pass the policy to checkpoint through context_fn")
    if gelu in SAVE:
        return ctx.t("your policy is the wrong way round: it keeps the output of torch.ops.aten.gelu.default "
                     "and recomputes torch.ops.aten.addmm.default. Keep what the expensive ops produce "
                     "(MUST_SAVE) and recompute the cheap ones (PREFER_RECOMPUTE)")
    if mm in SAVE:
        return ctx.t("your policy saves torch.ops.aten.mm.default but recomputes torch.ops.aten.addmm.default, "
                     "which is what nn.Linear with a bias runs: save every matmul overload the block runs")
    return ctx.t("your policy returns {got} for every op it was shown (torch.ops.aten.addmm.default, "
                 "torch.ops.aten.mm.default, torch.ops.aten.gelu.default): it never recognises a matmul. The "
                 "policy is called with ATen overloads, not Python functions or op names: compare op with "
                 "torch.ops.aten.mm.default and torch.ops.aten.addmm.default", got=addmm)


def _names(counts):
    return ", ".join(f"{name} x{n}" for name, n in sorted(counts.items()))


def check(ctx):
    mine, ref = ctx.learner, ctx.reference

    # 1. Same output and gradients as the plain stack, on awkward shapes (an N-D input runs the
    #    Linear layers through a reshape). The input does not require grad, as in training.
    for trial in ctx.trials(3):
        depth = (3, 3, 2)[trial]
        width = ctx.choice([24, 40, 17])
        lead = ((37,), (5, 9), (1,))[trial]
        torch.manual_seed(ctx.seed + trial)
        stack = ref.build_stack(depth, width).to(ctx.device)
        x, g = ctx.randn(*lead, width), ctx.randn(*lead, width)
        expected = stack(x)
        expected.backward(g)
        plain = _grads(stack)
        stack.zero_grad(set_to_none=True)

        out = _forward(ctx, mine.selective_forward, stack, x)
        ctx.expect(isinstance(out, torch.Tensor),
                   ctx.t("selective_forward returned a {kind}, expected a tensor", kind=type(out).__name__))
        ctx.expect_close("output of selective_forward", out, expected.detach())
        ctx.expect(out.requires_grad,
                   ctx.t("the output of selective_forward does not require grad, so no gradient can reach the "
                         "blocks' parameters: was it computed under torch.no_grad() or detached?"))
        out.backward(g)
        got = _grads(stack)
        missing = [name for name, grad in got.items() if grad is None]
        ctx.expect(not missing,
                   ctx.t("{n} of the stack's {total} parameters got no gradient (the first: `{first}`): the "
                         "graph is cut between the blocks. Was a block's input detached, or run under "
                         "torch.no_grad()?", n=len(missing), total=len(got), first=missing[0] if missing else ""))
        ctx.expect_grads_close(got, plain)

    torch.manual_seed(ctx.seed + 7)
    stack = ref.build_stack(3, 20).to(ctx.device)
    x, g = ctx.randn(6, 20), ctx.randn(6, 20)
    x_plain, x_mine = x.clone().requires_grad_(), x.clone().requires_grad_()
    stack(x_plain).backward(g)
    stack.zero_grad(set_to_none=True)
    _forward(ctx, mine.selective_forward, stack, x_mine).backward(g)
    ctx.expect(x_mine.grad is not None,
               ctx.t("when the input requires grad (the stack sits inside a bigger model), it got no gradient "
                     "from selective_forward: was it detached?"))
    ctx.expect_close("gradient of the input (when it requires grad)", x_mine.grad, x_plain.grad)

    # 1c. Under torch.no_grad() (evaluation): the same output, and the caller's grad mode left off.
    with torch.no_grad():
        out = _forward(ctx, mine.selective_forward, stack, x)
        ctx.expect(not torch.is_grad_enabled(),
                   ctx.t("selective_forward, called under torch.no_grad(), turned grad mode back on for its "
                         "caller: leave the caller's grad mode as it was"))
        expected = stack(x)
    ctx.expect_close(ctx.t("output of selective_forward under torch.no_grad()"), out, expected)

    # 2. What backward reruns: no matmul, but the cheap ops of every block.
    ctx.phase(ctx.t("counting the ops that backward reruns"))
    depth = 4
    torch.manual_seed(ctx.seed + 11)
    stack = ref.build_stack(depth, 24).to(ctx.device)
    x, g = ctx.randn(16, 24), ctx.randn(16, 24)
    plain = _backward_ops(ctx, lambda s, inp: s(inp), stack, x, g)
    ops = _backward_ops(ctx, mine.selective_forward, stack, x, g)
    ref_ops = _backward_ops(ctx, ref.selective_forward, stack, x, g)
    full_ops = _backward_ops(ctx, _full, stack, x, g)
    matmuls = extra(ops, plain, MATMULS)
    cheap, ref_cheap = extra(ops, plain, CHEAP), extra(ref_ops, plain, CHEAP)
    rerun = {"yours": sum(matmuls.values()), "reference": sum(extra(ref_ops, plain, MATMULS).values()),
             "full_checkpointing": sum(extra(full_ops, plain, MATMULS).values())}
    ctx.figure("matmuls_rerun_in_backward", rerun,
               label=ctx.t("matmuls that backward reruns on {depth} blocks: {yours} with your policy, {reference} "
                           "with the reference's, {full_checkpointing} with full checkpointing", depth=depth,
                           **rerun))
    cheap_rerun = {"yours": sum(cheap.values()), "reference": sum(ref_cheap.values())}
    ctx.figure("cheap_ops_rerun_in_backward", cheap_rerun,
               label=ctx.t("cheap ops that backward reruns on {depth} blocks: {yours} with your policy, "
                           "{reference} with the reference's", depth=depth, **cheap_rerun))
    if matmuls:
        ctx.fail(ctx.t("on a {depth}-block stack, backward reran {n} matmul(s) ({ops}) that forward should have "
                       "kept: {why}", depth=depth, n=sum(matmuls.values()), ops=_names(matmuls),
                       why=_why_matmuls(ctx, mine)))
    ctx.expect(bool(cheap),
               ctx.t("on a {depth}-block stack, backward reran none of the blocks' cheap ops (layer norm, GELU): "
                     "nothing was recomputed, so either no block is checkpointed or the policy keeps every op's "
                     "output, and the memory stays as high as without checkpointing. Checkpoint every block and "
                     "return CheckpointPolicy.PREFER_RECOMPUTE for everything but the matmuls", depth=depth))
    ctx.expect(sum(cheap.values()) >= sum(ref_cheap.values()),
               ctx.t("on a {depth}-block stack, backward reran {n} cheap op(s) ({ops}) where the reference "
                     "reruns {m} ({ref_ops}): some blocks are not checkpointed, or the policy keeps the output "
                     "of some cheap ops. Checkpoint every block with the policy and recompute every op but the "
                     "matmuls", depth=depth, n=sum(cheap.values()), ops=_names(cheap),
                     m=sum(ref_cheap.values()), ref_ops=_names(ref_cheap)))

    # 2b. The policy itself, for ops this Block does not run: every matmul overload is kept (a Linear
    #     without a bias runs aten.mm, a batched matmul aten.bmm), and no cheap op is (saving the
    #     residual add keeps a (rows, width) tensor per block that backward could rebuild for free).
    #     A policy that cannot be probed with stand-in arguments is left to the counts above.
    a, b, bias = torch.zeros(4, 3), torch.zeros(3, 5), torch.zeros(5)
    a3, b3 = torch.zeros(2, 4, 3), torch.zeros(2, 3, 5)
    w3, b3n = torch.ones(3), torch.zeros(3)
    for op, args, what in ((aten.mm.default, (a, b), ctx.t("what nn.Linear without a bias runs")),
                           (aten.addmm.default, (bias, a, b), ctx.t("what nn.Linear with a bias runs")),
                           (aten.bmm.default, (a3, b3), ctx.t("a batched matmul"))):
        got = _policy_says(ctx, mine, op, args)
        ctx.expect(got is None or got in SAVE,
                   ctx.t("your policy returns {got} for torch.ops.{op} ({what}): keep the output of every matrix "
                         "multiplication (MUST_SAVE), aten.mm and aten.bmm as well as aten.addmm",
                         got=got, op=str(op), what=what))
    for op, args in ((aten.add.Tensor, (a, a)), (aten.mul.Tensor, (a, a)), (aten.gelu.default, (a,)),
                     (aten.native_layer_norm.default, (a, [3], w3, b3n, 1e-5))):
        got = _policy_says(ctx, mine, op, args)
        ctx.expect(got is None or got not in SAVE,
                   ctx.t("your policy returns {got} for torch.ops.{op}, a cheap op: forward keeps its output "
                         "although backward could recompute it for next to nothing. Keep only what the matmuls "
                         "produce, and answer PREFER_RECOMPUTE (or MUST_RECOMPUTE) for every other op",
                         got=got, op=str(op)))

    # 3. Peak memory of a whole training step: between full checkpointing and none.
    ctx.phase(ctx.t("measuring peak memory of forward + backward"))
    torch.manual_seed(ctx.seed)
    stack = ref.build_stack(4, 64).to(ctx.device)
    x, g = ctx.randn(256, 64), ctx.randn(256, 64)

    def step(forward):
        def run():
            stack.zero_grad(set_to_none=True)
            forward(stack, x).backward(g)
        return run

    plain_step, full_step = step(lambda s, inp: s(inp)), step(_full)
    ctx.peak_memory(plain_step)  # the profiler's first run pays its own start-up: warm it
    plain_bytes, full_bytes = ctx.peak_memory(plain_step), ctx.peak_memory(full_step)
    mem = ctx.memory(step(mine.selective_forward), step(ref.selective_forward),
                     compares=ctx.t("one training step (forward + backward): your policy vs the reference's"))
    peaks = {"no_checkpointing": round(plain_bytes / 2**20, 3), "full_checkpointing": round(full_bytes / 2**20, 3),
             "yours": round(mem.learner_bytes / 2**20, 3), "reference": round(mem.reference_bytes / 2**20, 3)}
    ctx.figure("peak_MiB", peaks,
               label=ctx.t("peak memory of a step: {yours:.3f} MiB with your policy, {reference:.3f} MiB with the "
                           "reference's, {no_checkpointing:.3f} MiB without checkpointing, {full_checkpointing:.3f} "
                           "MiB with full checkpointing", **peaks))
    ctx.expect(mem.learner_bytes <= MAX_OVER_REFERENCE * mem.reference_bytes,
               ctx.t("peak memory of forward+backward is {mine:.2f} MiB with your selective checkpointing: "
                     "{plain:.2f} MiB without checkpointing, {full:.2f} MiB with full checkpointing, and the "
                     "reference's policy reaches {ref:.2f} MiB (yours may be at most {over:.0f}% above it). "
                     "Keep only what the matmuls produce and recompute the rest, in every block",
                     mine=mem.learner_bytes / 2**20, plain=plain_bytes / 2**20, full=full_bytes / 2**20,
                     ref=mem.reference_bytes / 2**20, over=100 * (MAX_OVER_REFERENCE - 1)))

    # 4. What it buys over full checkpointing: no second pass through the matmuls.
    ctx.time(step(mine.selective_forward), full_step,
             compares=ctx.t("a training step: your selective checkpointing vs full checkpointing"),
             sides=(ctx.t("your selective step"), ctx.t("full checkpointing")))
