"""Check: FSDP2 sharding (per block, then root), about 1/world_size of the parameters per rank,
and training steps on per-rank batches that match a single process training on the whole batch.

Runs on every torchrun rank; each rank judges its own shards and losses.
"""

import copy

import torch
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FSDPModule
from torch.distributed.tensor import DTensor, Shard

from _common import call_setup, process_group


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
    torch.manual_seed(ctx.seed)
    reference = ref_mod.Net(in_features, dim, n_layers, out_features)
    model = copy.deepcopy(reference)
    mesh = init_device_mesh("cpu", (world,))

    ctx.phase(ctx.t("sharding your model"))
    optimizer = call_setup(ctx, "setup_fsdp", lambda: ctx.learner.setup_fsdp(model, mesh),
                           ctx.t("call fully_shard on each block first, then on the whole model (the root)"))

    for i, layer in enumerate(model.layers):
        ctx.expect(isinstance(layer, FSDPModule),
                   ctx.t("model.layers[{i}] is not its own FSDP unit: call fully_shard on every block "
                         "before the root, so that only one block is gathered at a time", i=i))
    ctx.expect(isinstance(model, FSDPModule),
               ctx.t("the model itself was not passed to fully_shard: after the blocks, shard the root "
                     "too (it owns inp and head, and drives the blocks' communication)"))
    expected_local = 0
    for name, p in model.named_parameters():
        if not isinstance(p, DTensor):
            ctx.fail(ctx.t("`{name}` is an ordinary tensor: it was not sharded", name=name))
        ctx.expect(tuple(p.placements) == (Shard(0),),
                   ctx.t("`{name}` has placements {placements}, expected (Shard(dim=0),)",
                         name=name, placements=repr(tuple(p.placements))))
        rows = p.shape[0]
        want = _local_rows(rows, rank, world) * (p.numel() // rows)
        ctx.expect(p.to_local().numel() == want,
                   ctx.t("`{name}`: this rank holds {local} of its {total} values, expected {want}",
                         name=name, local=p.to_local().numel(), total=p.numel(), want=want))
        expected_local += want
    local = sum(p.to_local().numel() for p in model.parameters())
    total = sum(p.numel() for p in reference.parameters())
    ctx.figure("parameters", {"this_rank": local, "whole_model": total, "share": round(local / total, 3)})
    ctx.expect(abs(local - total / world) <= 0.1 * total / world,
               ctx.t("this rank holds {local} of {total} parameters; with {world} ranks it should hold about "
                     "{share}", local=local, total=total, world=world, share=total // world))

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

    ref_opt = torch.optim.SGD(reference.parameters(), lr=ref_mod.LR)
    per_rank = ctx.choice([3, 4, 6])
    steps = 3
    for step in ctx.trials(steps, ctx.t("training step")):
        x = ctx.randn(world * per_rank, in_features)        # the global batch, equal on every rank
        y = ctx.randn(world * per_rank, out_features)
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
        ctx.expect_close(f"loss returned by train_step at step {step + 1}",
                         loss.detach().reshape(()).float(), local_loss, atol=1e-5, rtol=1e-4)

        F.mse_loss(reference(x), y).backward()               # one process, the whole batch
        ref_opt.step()
        ref_opt.zero_grad()
        for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
            full = (p.full_tensor() if isinstance(p, DTensor) else p).detach()
            label = (f"`{name}` after step {step + 1} (compared with one process training the "
                     "unsharded model on the whole batch)")
            if step > 0 and full.shape == q.shape and not torch.allclose(full, q, atol=1e-5, rtol=1e-4):
                label += ctx.t("; step 1 matched, so look at what carries over between steps: "
                               "are the gradients cleared after (or before) every step?")
            ctx.expect_close(label, full, q.detach(), atol=1e-5, rtol=1e-4)
