"""Check: FSDP2 sharding (per block, then root) over the mesh given, about 1/world_size of the
parameters per rank, and training steps on per-rank batches that match a single process
training on the whole batch. Then a second model on a mesh of this rank alone (one step), so
code that ignores its mesh argument shows.

Runs on every torchrun rank; each rank judges its own shards and losses. The manifest runs it
with 2 ranks, then 4; with 4, the sharding and one training step only.
"""

import torch
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FSDPModule
from torch.distributed.tensor import DTensor, Shard

from _common import call_setup, mesh_ranks, own_model, process_group, sub_mesh_of_one


def check(ctx):
    with process_group():
        _check(ctx)


def _local_rows(rows, rank, world):
    """Rows of dim 0 that FSDP2 gives `rank` (torch.chunk: ceil-sized pieces, the last shorter)."""
    size = -(-rows // world)
    return max(0, min(rows, (rank + 1) * size) - rank * size)


def _check(ctx):
    rank, world = ctx.rank, ctx.world_size
    ref_mod = ctx.reference
    in_features = ctx.choice([5, 8, 9])
    dim = ctx.choice([10, 13, 16])           # 13: the shards of a dimension are uneven
    n_layers = ctx.choice([2, 3])
    out_features = ctx.choice([3, 4])
    sizes = (in_features, dim, n_layers, out_features)
    torch.manual_seed(ctx.seed)
    reference = ref_mod.Net(*sizes)
    model = own_model(ctx, "Net", reference, *sizes)
    mesh = init_device_mesh("cpu", (world,))

    ctx.phase(ctx.t("sharding your model"))
    optimizer = _setup(ctx, model, reference, mesh)
    local = sum(p.to_local().numel() for p in model.parameters())
    total = sum(p.numel() for p in reference.parameters())
    ctx.figure("parameters", {"this_rank": local, "whole_model": total, "share": round(local / total, 3)},
               label=ctx.t("parameters on rank 0: {local} of the model's {total} ({share:.0%})", local=local,
                           total=total, share=local / total))
    # torch.chunk's share of every parameter's rows: about total / world, but with 4 ranks a width
    # of 13 splits 4, 4, 4, 1, so the last rank holds much less than a quarter
    share = sum(_local_rows(p.shape[0], rank, world) * (p.numel() // p.shape[0]) for p in reference.parameters())
    ctx.expect(local == share,
               ctx.t("this rank holds {local} of {total} parameters; with {world} ranks it should hold about "
                     "{share}", local=local, total=total, world=world, share=share))
    per_rank = ctx.choice([3, 4, 6])
    # With 2 ranks (the first world size) three steps and the second model below; with more, one
    # step, which is where code that assumes two ranks goes wrong: every collective of a 4-rank
    # run on 2 cores waits for the slowest of 8 processes (and the 1-rank mesh is one rank
    # whatever the world size).
    _train(ctx, model, optimizer, reference, 3 if world == 2 else 1, world, rank, per_rank, sizes, "")
    if world != 2:
        return

    # "all on `mesh`": a second model on a mesh of this rank alone. Each rank then trains its own
    # unsharded copy on its own data; code that shards over the default mesh of all ranks
    # averages over both ranks instead.
    ctx.phase(ctx.t("sharding a second model over a mesh of this rank alone"))
    torch.manual_seed(ctx.seed + 1)
    reference = ref_mod.Net(*sizes)
    model = own_model(ctx, "Net", reference, *sizes)
    optimizer = _setup(ctx, model, reference, sub_mesh_of_one(world))
    _train(ctx, model, optimizer, reference, 1, 1, 0, per_rank, sizes, "1-rank mesh: ")


def _setup(ctx, model, reference, mesh):
    """setup_fsdp(model, mesh), and what it must leave: FSDP units sharded over `mesh`, and an
    SGD over the sharded parameters."""
    ref_mod = ctx.reference
    rank, world = mesh.get_local_rank(), mesh.size()
    optimizer = call_setup(ctx, "setup_fsdp", lambda: ctx.learner.setup_fsdp(model, mesh),
                           ctx.t("call fully_shard on each block first, then on the whole model (the root)"))

    for i, layer in enumerate(model.layers):
        ctx.expect(isinstance(layer, FSDPModule),
                   ctx.t("model.layers[{i}] is not its own FSDP unit: call fully_shard on every block "
                         "before the root, so that only one block is gathered at a time", i=i))
    ctx.expect(isinstance(model, FSDPModule),
               ctx.t("the model itself was not passed to fully_shard: after the blocks, shard the root "
                     "too (it owns inp and head, and drives the blocks' communication)"))
    for name, p in model.named_parameters():
        if not isinstance(p, DTensor):
            ctx.fail(ctx.t("`{name}` is an ordinary tensor: it was not sharded", name=name))
        ctx.expect(mesh_ranks(p.device_mesh) == mesh_ranks(mesh),
                   ctx.t("`{name}` is sharded over the ranks {have}, not over the mesh it was given ({want}): "
                         "pass mesh=mesh to every fully_shard call (without it FSDP shards over all ranks)",
                         name=name, have=mesh_ranks(p.device_mesh), want=mesh_ranks(mesh)))
        ctx.expect(tuple(p.placements) == (Shard(0),),
                   ctx.t("`{name}` has placements {placements}, expected (Shard(dim=0),)",
                         name=name, placements=repr(tuple(p.placements))))
        rows = p.shape[0]
        want = _local_rows(rows, rank, world) * (p.numel() // rows)
        ctx.expect(p.to_local().numel() == want,
                   ctx.t("`{name}`: this rank holds {local} of its {total} values, expected {want}",
                         name=name, local=p.to_local().numel(), total=p.numel(), want=want))

    ctx.expect(isinstance(optimizer, torch.optim.SGD),
               ctx.t("setup_fsdp must return a torch.optim.SGD optimizer, it returned {kind}",
                     kind=type(optimizer).__name__))
    in_opt = {id(p) for group in optimizer.param_groups for p in group["params"]}
    in_model = {id(p) for p in model.parameters()}
    ctx.expect(in_opt == in_model,
               ctx.t("the optimizer holds parameters that the sharded model no longer uses: fully_shard "
                     "replaces every parameter with a sharded DTensor, so build the optimizer after sharding"))
    lrs = {group["lr"] for group in optimizer.param_groups}
    ctx.expect(lrs == {ref_mod.LR}, ctx.t("the optimizer's learning rate is {lrs}, expected LR = {lr}",
                                          lrs=sorted(lrs), lr=ref_mod.LR))
    # plain SGD: the settings that change the update keep their defaults (foreach and the like
    # only choose an implementation)
    plain = {"momentum": 0, "dampening": 0, "weight_decay": 0, "nesterov": False, "maximize": False}
    for group in optimizer.param_groups:
        for key, default in plain.items():
            ctx.expect(group.get(key, default) == default,
                       ctx.t("the optimizer has {key}={value}: the task asks for plain torch.optim.SGD with "
                             "lr=LR, which the single-process run also uses", key=key, value=group.get(key)))
    return optimizer


def _train(ctx, model, optimizer, reference, steps, world, rank, per_rank, sizes, prefix):
    """`steps` calls of train_step, each on this rank's part of a global batch of `world` parts,
    against one process training `reference` with SGD on the whole batch."""
    ref_mod = ctx.reference
    in_features, out_features = sizes[0], sizes[3]
    ref_opt = torch.optim.SGD(reference.parameters(), lr=ref_mod.LR)
    for step in ctx.trials(steps, ctx.t("training step")):
        x = ctx.randn(world * per_rank, in_features)        # the global batch, equal on every rank
        y = ctx.randn(world * per_rank, out_features)
        if world == 1:                                      # a mesh of this rank alone: its own data
            x, y = x + ctx.rank, y - ctx.rank
        mine = slice(rank * per_rank, (rank + 1) * per_rank)
        with torch.no_grad():
            local_loss = F.mse_loss(reference(x[mine]), y[mine])
        loss = ctx.learner.train_step(model, optimizer, x[mine].clone(), y[mine].clone())
        ctx.expect(isinstance(loss, torch.Tensor) and loss.numel() == 1,
                   ctx.t("train_step must return the loss as a one-element tensor"))
        ctx.expect(not loss.requires_grad and loss.grad_fn is None,
                   ctx.t("train_step returned a loss that still holds its autograd graph (the whole "
                         "forward pass stays in memory as long as the caller keeps it): return "
                         "loss.detach()"))
        ctx.expect_close(f"{prefix}loss returned by train_step at step {step + 1}",
                         loss.detach().reshape(()).float(), local_loss, atol=1e-5, rtol=1e-4)
        for name, p in model.named_parameters():
            grad = p.grad.to_local() if isinstance(p.grad, DTensor) else p.grad
            ctx.expect(grad is None or not grad.any(),
                       ctx.t("`{name}` still has a gradient after train_step: clear the gradients after the step",
                             name=name))

        F.mse_loss(reference(x), y).backward()               # one process, the whole batch
        ref_opt.step()
        ref_opt.zero_grad()
        for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
            full = (p.full_tensor() if isinstance(p, DTensor) else p).detach()
            label = (f"{prefix}`{name}` after step {step + 1} (compared with one process training the "
                     "unsharded model on the whole batch)")
            if step > 0 and full.shape == q.shape and not torch.allclose(full, q, atol=1e-5, rtol=1e-4):
                label += ctx.t("; step 1 matched, so look at what carries over between steps: "
                               "are the gradients cleared after every step?")
            ctx.expect_close(label, full, q.detach(), atol=1e-5, rtol=1e-4)
