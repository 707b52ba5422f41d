"""Check: 2-D parallelism of the attention blocks (fused qkv, RMSNorm, MLP) on a ("dp", "tp")
mesh. Two mesh shapes, a model each: on 2 ranks 1x2 and 2x1 (in the drawn order); on a job
whose size has a factor (4 ranks: 2x2) that shape and one of 1xN / Nx1. The sizes are drawn as
multiples of the job's size, so any tp degree divides them.

Judged by what the parallel model does and where its parameters live, not by the plan:
- every block and the model are FSDP units; every parameter is sharded over "dp" of the mesh
  it was given; each block's attention and MLP weights also split over "tp";
- two training steps (SGD, each dp rank on its own part of the batch) give the output one
  process gives on that part, and the model after them computes what one process trained on
  the whole batch computes;
- one forward pass runs at most 2 tensor-parallel all-reduces per block, and so does one
  backward pass (an all-gather or reduce-scatter is half of one; FSDP's c10d collectives
  are not counted).

Runs on every torchrun rank.
"""

import torch
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FSDPModule
from torch.distributed.tensor import DTensor, Replicate

from _common import all_reduce_equivalents, call_setup, collectives, mesh_ranks, own_model, process_group


def check(ctx):
    with process_group():
        _check(ctx)


def _shapes(ctx, world):
    """Two (dp, tp) shapes for this job: both dimensions above 1 where the size allows it."""
    ends = [(1, world), (world, 1)]
    factor = next((f for f in range(2, world) if world % f == 0), None)
    if factor is None:
        first = ctx.choice(ends)
        return [first, first[::-1]]
    return [(factor, world // factor), ctx.choice(ends)]


def _check(ctx):
    world = ctx.world_size
    shapes = _shapes(ctx, world)
    sizes = {
        "head_dim": ctx.choice([2, 3]),
        "n_heads": world * ctx.choice([1, 2]),
        "hidden": world * ctx.choice([3, 5]),
        "seq": world * ctx.choice([1, 2]),
        "rows": ctx.choice([1, 2]),
    }
    n_layers = ctx.choice([1, 2])
    # "any shape of the mesh": both shapes, each with a model of its own (code that builds a
    # fixed mesh of its own, or takes the tp degree from the job, passes one of them only)
    for shape, figure in zip(shapes, ("parameters", "parameters_other_mesh")):
        _run(ctx, shape, sizes, n_layers, figure)


def _expect_placed(ctx, model, mesh, shape):
    """Fail on the first parameter placed other than the task says (no fact per parameter: a
    correct layout of its own may have more or fewer parameters than the reference's)."""
    whole, dp_ranks = mesh_ranks(mesh), mesh_ranks(mesh["dp"])
    projections = {id(p) for block in model.layers for part in (block.attn, block.mlp) for p in part.parameters()}
    for name, p in model.named_parameters():
        if not isinstance(p, DTensor):
            ctx.fail(ctx.t("`{name}` is an ordinary tensor: it was neither tensor-parallel nor sharded", name=name))
        dims = p.device_mesh.mesh_dim_names or ()
        if id(p) in projections:
            if dims != ("dp", "tp"):
                ctx.fail(ctx.t("`{name}` lives on the mesh dimensions {dims}, expected ('dp', 'tp'): the attention "
                               "and MLP weights are tensor parallel on mesh['tp'] first, then fully_shard shards "
                               "them on mesh['dp']", name=name, dims=dims))
            if isinstance(p.placements[1], Replicate):
                ctx.fail(ctx.t("`{name}` is whole on every rank of the 'tp' dimension: it was not split by tensor "
                               "parallelism", name=name))
            want = whole
        else:
            if "dp" not in dims:
                ctx.fail(ctx.t("`{name}` lives on the mesh dimensions {dims}, expected 'dp' among them: FSDP "
                               "shards it on mesh['dp']", name=name, dims=dims))
            want = whole if len(dims) == 2 else dp_ranks
        if mesh_ranks(p.device_mesh) != want:
            ctx.fail(ctx.t("`{name}` lives on a mesh of the ranks {have}, expected {want} (the {dp}x{tp} mesh it "
                           "was given): use mesh['tp'] and mesh['dp'] of the `mesh` argument, not a mesh of your own",
                           name=name, have=mesh_ranks(p.device_mesh), want=want, dp=shape[0], tp=shape[1]))
        # Shard(0), or _StridedShard(0) when FSDP shards rows that tensor parallelism already split
        if getattr(p.placements[0], "dim", None) is None:
            ctx.fail(ctx.t("`{name}` is placed {have} on the 'dp' dimension, expected a shard: FSDP shards every "
                           "parameter there", name=name, have=p.placements[0]))


def _diagnose_heads(ctx, model, n_heads, tp, what):
    for i, block in enumerate(model.layers):
        heads = getattr(block.attn, "n_heads", None)
        if heads is not None and heads * tp != n_heads:
            ctx.fail(ctx.t("{what} differs from one process's: `layers.{i}.attn.n_heads` is {have}, but this rank "
                           "computes the features of {local} of the {n} heads (tp = {tp})",
                           what=what, i=i, have=heads, local=n_heads // tp, n=n_heads, tp=tp))


def _diagnose(ctx, model, n_heads, tp, what):
    _diagnose_heads(ctx, model, n_heads, tp, what)
    ctx.fail(ctx.t("{what} differs from one process's: each rank of a tp group must compute exactly its part "
                   "of every head and hidden feature; is rank r's piece of the fused qkv its own q, k and v?",
                   what=what))


def _run(ctx, shape, sizes, n_layers, figure):
    ref_mod = ctx.reference
    dp, tp = shape
    prefix = f"{dp}x{tp} mesh: "
    n_heads, hidden, rows, seq = sizes["n_heads"], sizes["hidden"], sizes["rows"], sizes["seq"]
    dim = n_heads * sizes["head_dim"]
    torch.manual_seed(ctx.seed)
    single = ref_mod.Net(dim, n_heads, hidden, n_layers)
    model = own_model(ctx, "Net", single, dim, n_heads, hidden, n_layers)
    mesh = init_device_mesh("cpu", shape, mesh_dim_names=("dp", "tp"))

    ctx.phase(ctx.t("parallelizing your model on a {dp}x{tp} (dp x tp) mesh", dp=dp, tp=tp))
    out = call_setup(ctx, "parallelize_2d", lambda: ctx.learner.parallelize_2d(model, mesh),
                     ctx.t("tensor parallelism on mesh['tp'] inside each block first, then fully_shard on "
                           "mesh['dp']"))
    ctx.expect(out is model,
               ctx.t("parallelize_2d must return the model it was given (both steps work in place)"))
    for i, block in enumerate(model.layers):
        ctx.expect(isinstance(block, FSDPModule),
                   ctx.t("model.layers[{i}] is not an FSDP unit: fully_shard every block", i=i))
    ctx.expect(isinstance(model, FSDPModule), ctx.t("the model itself (the root) was not passed to fully_shard"))
    _expect_placed(ctx, model, mesh, shape)
    local = sum(p.to_local().numel() for p in model.parameters())
    total = sum(p.numel() for p in single.parameters())
    ctx.figure(figure, {"mesh_dp_x_tp": list(shape), "this_rank": local, "whole_model": total},
               label=ctx.t("on a {dp} x {tp} mesh (dp x tp): {local} of the model's {total} parameters on rank 0",
                           dp=dp, tp=tp, local=local, total=total))

    budget = 2 * n_layers
    dp_rank = mesh.get_local_rank("dp")
    optimizer = torch.optim.SGD(model.parameters(), lr=ref_mod.LR)
    single_opt = torch.optim.SGD(single.parameters(), lr=ref_mod.LR)
    mine = slice(dp_rank * rows, (dp_rank + 1) * rows)   # one part of the batch per dp rank
    for step in ctx.trials(2, ctx.t("training step")):
        x, y = ctx.randn(dp * rows, seq, dim), ctx.randn(dp * rows, seq, 1)
        what = ctx.t("{prefix}the output at step {step}", prefix=prefix, step=step + 1)
        try:
            pred, forward = collectives(lambda: model(x[mine]), functional_only=True)
        except Exception as exc:
            message = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
            _diagnose_heads(ctx, model, n_heads, tp, what)
            ctx.fail(ctx.t("the parallelized model raised {kind}: a layer received an activation in a layout its "
                           "style does not expect", kind=type(exc).__name__), [message])
        if isinstance(pred, DTensor):
            ctx.fail(ctx.t("the model's output is a DTensor: keep use_local_output at its default"))
        with torch.no_grad():
            want_out = single(x[mine])
        if pred.shape != want_out.shape or not torch.allclose(pred.detach(), want_out, atol=1e-5, rtol=1e-4):
            _diagnose(ctx, model, n_heads, tp, what)
        ctx.expect_close(f"{prefix}output at step {step + 1}", pred.detach(), want_out, atol=1e-5, rtol=1e-4)
        _, backward = collectives(lambda: F.mse_loss(pred, y[mine]).backward(), functional_only=True)
        if tp > 1:
            spent, back = all_reduce_equivalents(forward), all_reduce_equivalents(backward)
            ctx.expect(spent <= budget,
                       ctx.t("{prefix}one forward pass of the {n} blocks ran the tensor-parallel collectives {have}: "
                             "{spent:g} all-reduces' worth, over the budget of {budget} (2 per block; an all-gather "
                             "or a reduce-scatter counts as half of one)",
                             prefix=prefix, n=n_layers, have=forward, spent=spent, budget=budget))
            ctx.expect(back <= budget,
                       ctx.t("{prefix}one backward pass of the {n} blocks ran the tensor-parallel collectives {have}: "
                             "{spent:g} all-reduces' worth, over the budget of {budget} (2 per block): in backward, "
                             "every column-wise layer fed the block's whole activation reduces that input's gradient",
                             prefix=prefix, n=n_layers, have=backward, spent=back, budget=budget))
        optimizer.step()
        optimizer.zero_grad()
        F.mse_loss(single(x), y).backward()
        single_opt.step()
        single_opt.zero_grad()
    # the model after both steps against one process trained on the whole batch (every
    # parameter's update checked through what it computes, whatever layout was chosen)
    probe = ctx.randn(rows, seq, dim)
    with torch.no_grad():
        after = model(probe)
        ctx.expect_close(f"{prefix}output after two steps (compared with one process on the whole batch)",
                         after, single(probe), atol=1e-5, rtol=1e-4)
