"""Check: 2-D parallelism on a ("dp", "tp") mesh of 1x2 and of 2x1 CPU ranks (both shapes, a
model each). Every block's fc1/fc2 tensor parallel over "tp" and sharded by FSDP over "dp", the rest FSDP over "dp"; the output
and two training steps (each dp rank on its own part of the batch) equal one process's; a
forward pass runs one tensor-parallel all-reduce per block.

Runs on every torchrun rank.
"""

import torch
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FSDPModule
from torch.distributed.tensor import DTensor, Replicate, Shard

from _common import call_setup, functional_collectives, mesh_ranks, own_model, process_group

TP_PLACEMENT = {"fc1.weight": Shard(0), "fc1.bias": Shard(0), "fc2.weight": Shard(1), "fc2.bias": Replicate()}


def check(ctx):
    with process_group():
        _check(ctx)


def _check(ctx):
    world = ctx.world_size
    first = ctx.choice([(1, world), (world, 1)])
    dim, hidden, n_layers = ctx.choice([6, 9]), ctx.choice([8, 12]), ctx.choice([1, 2])
    rows = ctx.choice([2, 3])
    # "the code is the same for every shape": both shapes, in the drawn order, each with a model
    # of its own (code that builds a fixed mesh of its own passes one of them only)
    for shape, figure in ((first, "parameters"), (first[::-1], "parameters_other_mesh")):
        _run(ctx, shape, dim, hidden, n_layers, rows, figure)


def _run(ctx, shape, dim, hidden, n_layers, rows, figure):
    rank = ctx.rank
    ref_mod = ctx.reference
    prefix = f"{shape[0]}x{shape[1]} mesh: "
    torch.manual_seed(ctx.seed)
    single = ref_mod.Net(dim, hidden, n_layers)
    model = own_model(ctx, "Net", single, dim, hidden, n_layers)
    mesh = init_device_mesh("cpu", shape, mesh_dim_names=("dp", "tp"))
    whole, dp_ranks = mesh_ranks(mesh), mesh_ranks(mesh["dp"])

    ctx.phase(ctx.t("parallelizing your model on a {dp}x{tp} (dp x tp) mesh", dp=shape[0], tp=shape[1]))
    out = call_setup(ctx, "parallelize_2d", lambda: ctx.learner.parallelize_2d(model, mesh),
                     ctx.t("first parallelize_module on mesh['tp'] inside each block, then fully_shard "
                           "each block and the model on mesh['dp']"))
    ctx.expect(out is model,
               ctx.t("parallelize_2d must return the model it was given (both steps work in place)"))
    for i, block in enumerate(model.layers):
        ctx.expect(isinstance(block, FSDPModule),
                   ctx.t("model.layers[{i}] is not an FSDP unit: fully_shard every block", i=i))
    ctx.expect(isinstance(model, FSDPModule), ctx.t("the model itself (the root) was not passed to fully_shard"))
    for name, p in model.named_parameters():
        if not isinstance(p, DTensor):
            ctx.fail(ctx.t("`{name}` is an ordinary tensor: it was neither tensor-parallel nor sharded", name=name))
        dims = p.device_mesh.mesh_dim_names
        tail = ".".join(name.split(".")[-2:])
        if name.startswith("layers.") and tail in TP_PLACEMENT:
            ctx.expect(dims == ("dp", "tp"),
                       ctx.t("`{name}` lives on the mesh dimensions {dims}, expected ('dp', 'tp'): tensor "
                             "parallel on mesh['tp'] first, then fully_shard on mesh['dp']", name=name, dims=dims))
            want_ranks = whole
        else:
            ctx.expect(dims == ("dp",),
                       ctx.t("`{name}` lives on the mesh dimensions {dims}, expected ('dp',): FSDP uses "
                             "mesh['dp'] and only fc1/fc2 are tensor parallel", name=name, dims=dims))
            want_ranks = dp_ranks
        ctx.expect(mesh_ranks(p.device_mesh) == want_ranks,
                   ctx.t("`{name}` lives on a mesh of the ranks {have}, expected {want} (the {dp}x{tp} mesh it "
                         "was given): use mesh['tp'] and mesh['dp'] of the `mesh` argument, not a mesh of your own",
                         name=name, have=mesh_ranks(p.device_mesh), want=want_ranks, dp=shape[0], tp=shape[1]))
        if want_ranks is whole:
            ctx.expect(p.placements[1] == TP_PLACEMENT[tail],
                       ctx.t("`{name}` is placed {have} on the 'tp' dimension, expected {want}: fc1 is "
                             "ColwiseParallel, fc2 RowwiseParallel",
                             name=name, have=p.placements[1], want=TP_PLACEMENT[tail]))
            # Shard(0), or _StridedShard(0) on a 1x2 mesh (FSDP rows inside TP rows): both have dim 0
            ctx.expect(getattr(p.placements[0], "dim", None) == 0,
                       ctx.t("`{name}` is placed {have} on the 'dp' dimension, expected a shard of "
                             "dimension 0: FSDP shards it there", name=name, have=p.placements[0]))
        else:
            ctx.expect(p.placements == (Shard(0),),
                       ctx.t("`{name}` is placed {have}, expected (Shard(dim=0),)", name=name, have=p.placements))
    local = sum(p.to_local().numel() for p in model.parameters())
    total = sum(p.numel() for p in single.parameters())
    ctx.figure(figure, {"mesh_dp_x_tp": list(shape), "this_rank": local, "whole_model": total},
               label=ctx.t("on a {dp} x {tp} mesh (dp x tp): {local} of the model's {total} parameters on rank 0",
                           dp=shape[0], tp=shape[1], local=local, total=total))

    dp, tp, dp_rank = shape[0], shape[1], mesh.get_local_rank("dp")
    optimizer = torch.optim.SGD(model.parameters(), lr=ref_mod.LR)
    single_opt = torch.optim.SGD(single.parameters(), lr=ref_mod.LR)
    for step in ctx.trials(2, ctx.t("training step")):
        x, y = ctx.randn(dp * rows, dim), ctx.randn(dp * rows, 1)
        mine = slice(dp_rank * rows, (dp_rank + 1) * rows)   # one part of the batch per dp rank
        pred, comms = functional_collectives(lambda: model(x[mine]))
        ctx.expect(not isinstance(pred, DTensor),
                   ctx.t("the model's output is a DTensor: keep use_local_output at its default"))
        if tp > 1:
            # tensor parallel's collectives (FSDP's all-gathers not counted): the reference runs one
            # all-reduce per block, fc2's partial sums; a replicated hidden layer adds an all-gather
            want = {"all_reduce": n_layers}
            ctx.expect(comms == want,
                       ctx.t("one forward pass of the {n} blocks ran the tensor-parallel collectives {have}, "
                             "expected only {want}: one all-reduce per block. Keep fc1's output sharded "
                             "(ColwiseParallel's default) so that fc2 (RowwiseParallel) takes the slice as it is",
                             n=n_layers, have=comms, want=want))
        with torch.no_grad():
            want_out = single(x[mine])
        ctx.expect_close(f"{prefix}output at step {step + 1}", pred.detach(), want_out, atol=1e-5, rtol=1e-4)
        F.mse_loss(pred, y[mine]).backward()
        optimizer.step()
        optimizer.zero_grad()
        F.mse_loss(single(x), y).backward()
        single_opt.step()
        single_opt.zero_grad()
        for (name, p), q in zip(model.named_parameters(), single.parameters()):
            ctx.expect_close(f"{prefix}`{name}` after step {step + 1} (compared with one process on the whole batch)",
                             p.full_tensor().detach(), q.detach(), atol=1e-5, rtol=1e-4)
