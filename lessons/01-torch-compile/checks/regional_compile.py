"""Check: compile_regions compiles the model's repeated block in place so that ONE graph serves
every block: the counting backend receives one graph (holding one block, not the whole model),
every block runs it on every forward, no later step recompiles, and the outputs and gradients
of three training steps equal an eager computation with the learner's weights. Reports the
compile time of the first training step against compiling the whole model (backend "aot_eager":
Dynamo's and AOTAutograd's tracing, which grow with the graph, without Inductor's code generation)."""

import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from _recompiles import CountingBackend, Elsewhere, clear, compiler_config, expect_config_kept, recompiles, shown

INNER = "aot_eager"  # AOTAutograd traces forward and backward: its cost grows with the graph
STEPS = 3


def _unwrap(module: nn.Module) -> nn.Module:
    """The module itself, also when it was wrapped by torch.compile (an OptimizedModule)."""
    return getattr(module, "_orig_mod", module)


def _parameters(model: nn.Module, depth: int) -> dict[str, nn.Parameter]:
    """The model's parameters by their eager names (no `_orig_mod.` however it was compiled)."""
    params = {f"embed.{k}": p for k, p in model.embed.named_parameters()}
    for i in range(depth):
        block = _unwrap(model.blocks[i])
        for layer in ("norm", "fc1", "fc2"):
            params.update({f"blocks.{i}.{layer}.{k}": p for k, p in getattr(block, layer).named_parameters()})
    params.update({f"head.{k}": p for k, p in model.head.named_parameters()})
    return params


def _eager(model: nn.Module, p: dict[str, torch.Tensor], depth: int, x: torch.Tensor) -> torch.Tensor:
    """The model's computation written out with the learner's weights: block i scales its
    residual branch by 1/sqrt(2 * (i + 1))."""
    h = F.linear(x, p["embed.weight"], p["embed.bias"])
    for i in range(depth):
        b = f"blocks.{i}."
        eps = _unwrap(model.blocks[i]).norm.eps
        u = F.layer_norm(h, h.shape[-1:], p[b + "norm.weight"], p[b + "norm.bias"], eps)
        u = F.linear(F.gelu(F.linear(u, p[b + "fc1.weight"], p[b + "fc1.bias"])), p[b + "fc2.weight"], p[b + "fc2.bias"])
        h = h + u / math.sqrt(2 * (i + 1))
    return F.linear(h, p["head.weight"], p["head.bias"])


def _warm_up(ctx, dim: int) -> None:
    """Compile one block of the reference once (then forget it), so that the one-time costs of
    a first compile in this process (lazy imports, caches) land on neither compile-time figure."""
    ctx.phase(ctx.t("warming up the compiler"))
    clear()
    block = ctx.reference.Block(dim, 0).to(ctx.device)
    torch.compile(block, backend=CountingBackend(INNER))(ctx.randn(2, 3, dim, requires_grad=True)).sum().backward()
    clear()


def _step(ctx, fn, x: torch.Tensor, w: torch.Tensor, params: dict[str, nn.Parameter]):
    for p in params.values():
        p.grad = None
    out = fn(x)
    (out * w).sum().backward()
    return out.detach(), {k: (None if p.grad is None else p.grad.detach().clone()) for k, p in params.items()}


def _whole_model_compile_s(ctx, inputs: int, dim: int, depth: int, outputs: int, x, w) -> float:
    """Compile the reference model whole, the other way; its first training step's seconds."""
    torch.manual_seed(ctx.seed)
    whole = ctx.reference.Model(inputs, dim, depth, outputs).to(ctx.device)
    clear()
    with ctx.build(ctx.t("compiling the whole model instead, for comparison…"), figure="whole_model_compile_s",
                   label=ctx.t("first training step, whole model compiled")):
        start = time.perf_counter()
        (torch.compile(whole, backend=CountingBackend(INNER))(x) * w).sum().backward()
        return time.perf_counter() - start


def check(ctx):
    config = compiler_config()  # before the learner's file is imported
    mine = ctx.learner
    inputs, outputs = 12, 5
    dim = ctx.choice([24, 40])
    # Fewer blocks than Dynamo's recompile limit (8): a graph per block shows as such.
    depth = ctx.choice([5, 6, 7])
    batch, seq = 3, ctx.choice([7, 9, 11])
    torch.manual_seed(ctx.seed)
    model = mine.Model(inputs, dim, depth, outputs).to(ctx.device).train()
    blocks = getattr(model, "blocks", None)
    ctx.expect(isinstance(blocks, nn.ModuleList) and len(blocks) == depth
               and isinstance(getattr(model, "embed", None), nn.Linear)
               and isinstance(getattr(model, "head", None), nn.Linear)
               and all(isinstance(getattr(b, n, None), t) for b in blocks
                       for n, t in (("norm", nn.LayerNorm), ("fc1", nn.Linear), ("fc2", nn.Linear))),
               ctx.t("Model must keep its layers (embed, blocks, head) and each Block its norm, fc1 and fc2: change "
                     "how Block keeps its data, not the model's structure"))
    params = _parameters(model, depth)
    # The per-block scale is a constant of the architecture: as a Parameter it would get a gradient
    # and an optimizer over model.parameters() would change what the blocks compute.
    extra = sorted(k.replace("_orig_mod.", "") for k, p in model.named_parameters()
                   if all(p is not q for q in params.values()))
    ctx.expect(not extra,
               ctx.t("Model has parameters the original does not ({names}): a trainable tensor gets a gradient and an "
                     "optimizer changes it, so the blocks would no longer compute the fixed 1/sqrt(2 * (layer_idx + "
                     "1)). Keep per-block constants as buffers (register_buffer)", names=", ".join(extra[:3])))
    steps = [(ctx.randn(batch, seq, inputs), ctx.randn(batch, seq, outputs)) for _ in range(STEPS)]

    _warm_up(ctx, dim)
    ctx.channel.quiet()  # the learner's run: compile time is measured without the reference run's load
    clear()
    elsewhere = Elsewhere(ctx)  # compiled before compile_regions runs: it must stay compiled
    counter = CountingBackend(INNER)
    results, runs = [], []
    compiling = ctx.t("compiling your blocks (first training step, backend {inner})…", inner=INNER)
    with ctx.build(compiling, figure="compile_s", label=ctx.t("first training step, your blocks compiled")):
        start = time.perf_counter()
        compiled = mine.compile_regions(model, backend=counter)
        ctx.expect(callable(compiled), ctx.t("compile_regions must return the model (callable), it returned {kind}",
                                             kind=type(compiled).__name__))
        before = counter.runs
        results.append(_step(ctx, compiled, *steps[0], params))
        runs.append(counter.runs - before)
        regional = time.perf_counter() - start
    for i in ctx.trials(STEPS - 1, ctx.t("more training steps")):
        before = counter.runs
        results.append(_step(ctx, compiled, *steps[i + 1], params))
        runs.append(counter.runs - before)

    ctx.figure("graphs", counter.graphs, label=ctx.t("graphs compiled"))
    ctx.figure("compiled graph runs per forward", runs[-1], label=ctx.t("compiled graph runs per forward pass"))
    reasons, hints, kinds = recompiles(ctx)  # before the comparison below resets Dynamo
    elsewhere.expect_kept(ctx, "compile_regions")
    if getattr(ctx.channel, "measures_speed", True):
        # Only in the learner's run (the reference run's figures are not shown).
        whole = _whole_model_compile_s(ctx, inputs, dim, depth, outputs, *steps[0])
        ctx.figure("compile time, regional / whole model", round(regional / whole, 3),
                   label=ctx.t("first-step time, your blocks compiled / the whole model compiled"))

    ctx.expect(counter.graphs >= 1,
               ctx.t("no graph reached the backend the check passed in: nothing was compiled. torch.compile(block, "
                     "...) returns a new module and leaves `block` as it was; keep what it returns (or compile in "
                     "place with block.compile(...)), and pass the `backend` you are given"))
    most = max(counter.layer_norms)
    ctx.expect(not (most >= depth and runs[-1] < depth),
               ctx.t("you compiled the whole model: the backend got one graph holding all {depth} blocks ({norms} "
                     "layer norms), which runs once per forward, and its compile time grows with the depth. Compile "
                     "the repeated block instead, so one small graph serves every block", depth=depth, norms=most))
    ctx.expect(compiled is model,
               ctx.t("compile_regions must compile the blocks inside `model` and return `model` itself; it returned "
                     "a different {kind}", kind=type(compiled).__name__))
    if counter.graphs > 1:
        causes = []
        if "number" in kinds:
            causes.append(ctx.t("The blocks differ in a Python number that forward reads: Dynamo guards on its "
                                "value, so every block with another value needs a graph of its own."))
        if "backend" in kinds:
            causes.append(ctx.t("The blocks were compiled with different backend objects, and a graph compiled by "
                                "one backend is not reused under another."))
        if "sizes" in kinds:
            causes.append(ctx.t("Tensor sizes changed from one block or step to the next."))
        ctx.fail(ctx.t("{steps} training steps of {depth} blocks compiled {graphs} graphs; regional compilation "
                       "should compile one and reuse it for every block. {causes} Dynamo's recompile reasons: "
                       "{shown}", steps=STEPS, depth=depth, graphs=counter.graphs, causes=" ".join(causes),
                       shown=shown(ctx, reasons)), reasons[:8] + hints)
    for step, n in enumerate(runs, start=1):
        ctx.expect(n >= depth,
                   ctx.t("on training step {step} only {n} of the {depth} blocks ran the compiled graph: compile "
                         "every block, not just some", step=step, n=n, depth=depth))
        ctx.expect(n <= depth,
                   ctx.t("on training step {step} the {depth} blocks ran {n} compiled graphs: something splits "
                         "each block into several graphs (a graph break)", step=step, n=n, depth=depth))

    for step, ((out, grads), (x, w)) in enumerate(zip(results, steps), start=1):
        leaves = {k: p.detach().clone().requires_grad_() for k, p in params.items()}
        expected = _eager(model, leaves, depth, x)
        expected_grads = torch.autograd.grad((expected * w).sum(), list(leaves.values()))
        ctx.expect_close(ctx.t("output of training step {step}", step=step), out, expected.detach(),
                         atol=1e-5, rtol=1e-4, within_run=True)
        for key, grad in grads.items():
            ctx.expect(grad is not None,
                       ctx.t("`{key}` got no gradient on training step {step}: the compiled model must still train",
                             key=key, step=step))
        ctx.expect_close(ctx.t("gradients of the parameters on training step {step}", step=step), grads,
                         dict(zip(leaves, expected_grads)), atol=1e-5, rtol=1e-4, within_run=True)
    expect_config_kept(ctx, config, ctx.t("your code"))
