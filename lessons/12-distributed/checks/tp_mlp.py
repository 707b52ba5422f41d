"""Check: a stack of attention blocks (fused qkv, RMSNorm, MLP) made tensor parallel over a 1-D
mesh. Judged by what the parallel model does, not by which plan produced it:

- every rank holds 1/tp of each block's projection weights (attention and MLP), on the mesh
  it was given;
- the output, the input's gradient and the output after one SGD step equal the unsharded
  model's (so every parameter's gradient is right too, whatever layout the learner chose);
- one forward pass of the whole model communicates at most 2 all-reduces per block, and so
  does one backward pass (an all-gather or a reduce-scatter counts as half an all-reduce),
  counted with CommDebugMode.

Twice: over the job's mesh (2 or 3 blocks), and a second model (one block) over a mesh of
this rank alone. Correct at any world size: the head count and the hidden size are drawn as
multiples of it. Runs on every torchrun rank; each rank judges its own output.
"""

import re

import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Shard

from _common import (
    all_reduce_equivalents,
    call_setup,
    collectives,
    mesh_ranks,
    own_model,
    process_group,
    sub_mesh_of_one,
)

_PRIVATE = re.compile(r"^\s*(from|import)\s+torch\.distributed\._tensor\b", re.MULTILINE)
LR = 0.1


def check(ctx):
    with process_group():
        _check(ctx)


def _check(ctx):
    world = ctx.world_size
    source = ctx.learner_path.read_text(encoding="utf-8") if ctx.learner_path else ""
    ctx.expect(not _PRIVATE.search(source),
               ctx.t("you import from the private torch.distributed._tensor: DTensor, Shard and "
                     "Replicate live in the public torch.distributed.tensor"))
    # sizes drawn per run, every one a multiple of the job's size so that any mesh divides them
    sizes = {
        "head_dim": ctx.choice([2, 3, 4]),
        "n_heads": world * ctx.choice([1, 2, 3]),
        "hidden": world * ctx.choice([5, 7, 9]),
        "seq": world * ctx.choice([2, 3]),
    }
    n_layers = ctx.choice([2, 3])  # every block, not the first: at least two on the job's mesh
    _run(ctx, init_device_mesh("cpu", (world,)), ctx.seed, sizes, n_layers, "",
         ctx.t("parallelizing your model"), train=True)
    # "over the mesh it is given": a second model, of one block, on a mesh of this rank alone
    # (code that builds its own mesh or counts heads by the job's size fails here)
    _run(ctx, sub_mesh_of_one(world), ctx.seed + 1, sizes, 1, "1-rank mesh: ",
         ctx.t("parallelizing a second model over a mesh of this rank alone"), train=False)


def _projection_numel(block):
    """Elements of the block's attention and MLP weights this rank holds, and in the whole model."""
    local = full = 0
    for part in (block.attn, block.mlp):
        for p in part.parameters():
            local += p.to_local().numel() if isinstance(p, DTensor) else p.numel()
            full += p.numel()
    return local, full


def _diagnose_heads(ctx, model, tp, n_heads, what):
    """Fail when a block still reshapes by a head count that is not this rank's."""
    for i, block in enumerate(model.layers):
        heads = getattr(block.attn, "n_heads", None)
        if tp > 1 and heads == n_heads:
            ctx.fail(ctx.t("{what} differs from the unsharded model's: `layers.{i}.attn.n_heads` is still "
                           "{n}, the whole model's head count, but this rank computes the features of {local} "
                           "heads, so reshape(b, t, n_heads, -1) cuts them into heads of the wrong size",
                           what=what, i=i, n=n_heads, local=n_heads // tp))
        if tp == 1 and heads is not None and heads != n_heads:
            ctx.fail(ctx.t("{what} differs from the unsharded model's: on a mesh of one rank "
                           "`layers.{i}.attn.n_heads` is {have}, expected all {n} heads: take the number of "
                           "ranks from the `mesh` argument, not from the job", what=what, i=i, have=heads, n=n_heads))


def _diagnose(ctx, model, reference, tp, n_heads, what):
    """The learner's output differs: say why, in the terms of the two usual causes."""
    for i, (block, ref_block) in enumerate(zip(model.layers, reference.layers)):
        qkv = getattr(block.attn, "qkv", None)
        w = getattr(qkv, "weight", None)
        if tp > 1 and isinstance(w, DTensor) and tuple(w.placements) == (Shard(0),):
            rows = ref_block.attn.qkv.weight.shape[0] // tp
            rank = w.device_mesh.get_local_rank()
            plain_slice = ref_block.attn.qkv.weight[rank * rows:(rank + 1) * rows]
            local = w.to_local()
            if local.shape == plain_slice.shape and torch.equal(local, plain_slice):
                ctx.fail(ctx.t("{what} differs from the unsharded model's: this rank's Shard(0) piece of "
                               "`layers.{i}.attn.qkv` is rows {a} to {b} of the fused [q | k | v] weight, so "
                               "chunk(3) of its output does not give this rank's q, k and v",
                               what=what, i=i, a=rank * rows, b=(rank + 1) * rows - 1))
    _diagnose_heads(ctx, model, tp, n_heads, what)
    ctx.fail(ctx.t("{what} differs from the unsharded model's: each rank must compute exactly its part of "
                   "every head and every hidden feature", what=what))


def _forward(ctx, model, x, what, shape, heads, count=True):
    try:
        out, counts = collectives(lambda: model(x)) if count else (model(x), {})
    except Exception as exc:
        message = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
        _diagnose_heads(ctx, model, *heads, what)
        ctx.fail(ctx.t("the parallelized model raised {kind} on an input of shape {shape}: a layer received "
                       "an activation in a layout its style does not expect",
                       kind=type(exc).__name__, shape=tuple(shape)), [message])
    if isinstance(out, DTensor):
        ctx.fail(ctx.t("{what} is a DTensor: the model must return an ordinary tensor, whole on every rank "
                       "(leave use_local_output at its default)", what=what))
    wait = getattr(out, "wait", None)  # an AsyncCollectiveTensor: wait for it
    return (wait() if callable(wait) else out), counts


def _run(ctx, mesh, seed, sizes, n_layers, prefix, phase, train):
    tp = mesh.size()
    n_heads = sizes["n_heads"]
    dim = n_heads * sizes["head_dim"]
    hidden = sizes["hidden"]
    ref_mod = ctx.reference
    torch.manual_seed(seed)
    reference = ref_mod.Net(dim, n_heads, hidden, n_layers)
    model = own_model(ctx, "Net", reference, dim, n_heads, hidden, n_layers)

    ctx.phase(phase)
    returned = call_setup(ctx, "parallelize_blocks", lambda: ctx.learner.parallelize_blocks(model, mesh),
                          ctx.t("parallelize_module(block, mesh, plan) takes a plan of module names "
                                "(such as 'attn.proj') to ColwiseParallel() / RowwiseParallel()"))
    ctx.expect(returned is model,
               ctx.t("parallelize_blocks returned {kind} instead of the model it was given: parallelize "
                     "the model in place and return it",
                     kind=type(returned).__name__ if returned is not None else "None"))

    # the first parameter placed on another mesh, if any (one fact, whatever the layout's size)
    want = mesh_ranks(mesh)
    for name, p in model.named_parameters():
        if isinstance(p, DTensor) and mesh_ranks(p.device_mesh) != want:
            ctx.fail(ctx.t("`{name}` is sharded over the ranks {have}, not over the mesh it was given ({want}): "
                           "parallelize over the `mesh` argument, not over a mesh of your own",
                           name=name, have=mesh_ranks(p.device_mesh), want=want))
    total_local = 0
    for i, block in enumerate(model.layers):
        local, full = _projection_numel(block)
        total_local += local
        ctx.expect(local * tp == full,
                   ctx.t("layers.{i}: this rank holds {local} of the {full} elements of the attention's and "
                         "the MLP's weights, expected {want} (1/{tp}): is every projection of every block "
                         "sharded over the mesh?", i=i, local=local, full=full, want=full // tp, tp=tp))

    budget = 2 * n_layers
    if tp > 1:
        total = sum(p.numel() for p in reference.parameters())
        here = sum(p.to_local().numel() if isinstance(p, DTensor) else p.numel() for p in model.parameters())
        ctx.figure("parameters", {"this_rank": here, "whole_model": total},
                   label=ctx.t("parameters on rank 0: {local} of the model's {total}", local=here, total=total))

    for _ in ctx.trials(1):
        shape = (2, sizes["seq"], dim)
        x = ctx.randn(*shape)            # same seed on every rank: every rank sees the same input
        g = ctx.randn(*shape)
        x_tp = x.clone().requires_grad_()
        x_ref = x.clone().requires_grad_()
        model.zero_grad(set_to_none=True)
        reference.zero_grad(set_to_none=True)
        what = ctx.t("the output for input shape {shape}", shape=tuple(shape))
        out, forward = _forward(ctx, model, x_tp, what, shape, (tp, n_heads))
        expected = reference(x_ref)
        if out.shape != expected.shape or not torch.allclose(out, expected, atol=1e-5, rtol=1e-4):
            _diagnose(ctx, model, reference, tp, n_heads, what)
        ctx.expect_close(f"{prefix}output for input shape {tuple(shape)}", out, expected, atol=1e-5, rtol=1e-4)
        spent = all_reduce_equivalents(forward)
        if spent > budget:
            if any(name.startswith(("reduce_scatter", "_reduce_scatter")) for name in forward):
                advice = ctx.t("a reduce-scatter and an all-gather cost as much as the all-reduce they replace, "
                               "and this model takes and returns whole activations, so scattering its input and "
                               "gathering its output come on top")
            else:
                advice = ctx.t("keep an activation sharded from the column-wise layer that splits it to the "
                               "row-wise layer that sums it")
            ctx.fail(ctx.t("one forward pass of the {n} blocks ran the collectives {have}: {spent:g} all-reduces' "
                           "worth, over the budget of {budget} (2 per block; an all-gather or a reduce-scatter "
                           "counts as half of one): {advice}",
                           n=n_layers, have=forward, spent=spent, budget=budget, advice=advice))
        _, backward = collectives(lambda: (out * g).sum().backward())
        (expected * g).sum().backward()
        spent_back = all_reduce_equivalents(backward)
        ctx.expect(spent_back <= budget,
                   ctx.t("one backward pass of the {n} blocks ran the collectives {have}: {spent:g} all-reduces' "
                         "worth, over the budget of {budget} (2 per block). In backward, every column-wise layer "
                         "whose input is the block's whole activation reduces that input's gradient across the "
                         "ranks: count how many such layers each block has",
                         n=n_layers, have=backward, spent=spent_back, budget=budget))
        ctx.expect_close(f"{prefix}gradient of the input (shape {tuple(shape)})", x_tp.grad, x_ref.grad,
                         atol=1e-5, rtol=1e-4)
        if tp > 1:
            ctx.figure("all_reduces_per_forward", {"yours": spent, "budget": budget},
                       label=ctx.t("one forward pass: {yours:g} all-reduces' worth of communication, budget "
                                   "{budget} ({n} blocks); one backward pass: {back:g}",
                                   yours=spent, budget=budget, n=n_layers, back=spent_back))

    if not train:
        return
    # one SGD step from the gradients of a fresh input: the updated model must compute what the
    # updated unsharded one does (every parameter's gradient checked through what it changes)
    x, g, probe = ctx.randn(2, sizes["seq"], dim), ctx.randn(2, sizes["seq"], dim), ctx.randn(1, sizes["seq"], dim)
    model.zero_grad(set_to_none=True)
    reference.zero_grad(set_to_none=True)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=LR)
    out, _ = _forward(ctx, model, x, ctx.t("the output"), x.shape, (tp, n_heads), count=False)
    (out * g).sum().backward()
    (reference(x) * g).sum().backward()
    opt.step()
    ref_opt.step()
    with torch.no_grad():
        after, _ = _forward(ctx, model, probe, ctx.t("the output after one SGD step"), probe.shape, (tp, n_heads),
                            count=False)
        ctx.expect_close(f"{prefix}output after one SGD step", after, reference(probe), atol=1e-5, rtol=1e-4)
