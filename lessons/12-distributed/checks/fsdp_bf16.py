"""Check: FSDP2 mixed precision on 2 ranks. Every Linear computes in bfloat16, sharded
parameters and their gradients stay float32, gradients are reduced in float32, and training
steps stay close to float32 training of the unsharded model.

The exercise runs on 2 CPU processes with gloo, which every learner can run. The same checker
also runs on CUDA (each rank on the GPU named by LOCAL_RANK, with nccl), for a runner that
gives it 2 GPUs.
"""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FSDPModule
from torch.distributed.tensor import DTensor

from _common import call_setup, mesh_ranks, own_model, process_group, sub_mesh_of_one


def check(ctx):
    if ctx.device.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", ctx.rank)))
        torch.cuda.set_device(device)
        group = process_group("nccl", device_id=device)
    else:
        device = torch.device("cpu")
        group = process_group("gloo")
    with group:
        _check(ctx, device)


def _mp_policy(module):
    """The policy fully_shard stored on `module` (internal attribute; None if it moved)."""
    try:
        return module._get_fsdp_state()._fsdp_param_group.mp_policy
    except AttributeError:
        return None


def _check(ctx, device):
    world = ctx.world_size
    ref_mod = ctx.reference
    in_features, dim, n_layers, out_features = ctx.choice([5, 8]), ctx.choice([32, 48]), 2, 4
    sizes = (in_features, dim, n_layers, out_features)
    torch.manual_seed(ctx.seed)
    reference = ref_mod.Net(*sizes).to(device)
    model = own_model(ctx, "Net", reference, *sizes).to(device)
    mesh = init_device_mesh(device.type, (world,))

    ctx.phase(ctx.t("sharding your model"))
    _shard(ctx, model, mesh)
    _train(ctx, model, reference, device)

    # the mesh it is given: a second model on a mesh of this rank alone (code that shards over
    # the default mesh of all ranks shows here)
    ctx.phase(ctx.t("sharding a second model over a mesh of this rank alone"))
    torch.manual_seed(ctx.seed + 1)
    reference = ref_mod.Net(*sizes).to(device)
    model = own_model(ctx, "Net", reference, *sizes).to(device)
    _shard(ctx, model, _mesh_of_one(device, world))


def _mesh_of_one(device, world):
    if device.type == "cpu":
        return sub_mesh_of_one(world)
    return init_device_mesh(device.type, (world, 1), mesh_dim_names=("replica", "shard"))["shard"]


def _shard(ctx, model, mesh):
    """shard_bf16(model, mesh), and the units, meshes, dtypes and policies it must leave."""
    call_setup(ctx, "shard_bf16", lambda: ctx.learner.shard_bf16(model, mesh),
               ctx.t("call fully_shard on each block first, then on the whole model, each with mp_policy="))
    for i, layer in enumerate(model.layers):
        ctx.expect(isinstance(layer, FSDPModule), ctx.t("model.layers[{i}] is not its own FSDP unit", i=i))
    ctx.expect(isinstance(model, FSDPModule), ctx.t("the model itself (the root) was not passed to fully_shard"))
    for name, p in model.named_parameters():
        ctx.expect(isinstance(p, DTensor), ctx.t("`{name}` was not sharded", name=name))
        ctx.expect(mesh_ranks(p.device_mesh) == mesh_ranks(mesh),
                   ctx.t("`{name}` is sharded over the ranks {have}, not over the mesh it was given ({want}): "
                         "pass mesh=mesh to every fully_shard call (without it FSDP shards over all ranks)",
                         name=name, have=mesh_ranks(p.device_mesh), want=mesh_ranks(mesh)))
        ctx.expect(p.dtype == torch.float32,
                   ctx.t("the sharded `{name}` is stored as {dtype}: keep the model in float32; the "
                         "policy's param_dtype only sets the dtype of the gathered copy used for compute",
                         name=name, dtype=p.dtype))
    units = [(ctx.t("the root"), model)]
    units += [(f"model.layers[{i}]", layer) for i, layer in enumerate(model.layers)]
    for label, module in units:
        policy = _mp_policy(module)
        if policy is not None:
            ctx.expect(policy.param_dtype is not None,
                       ctx.t("{unit} has no mixed-precision policy: pass mp_policy= to its fully_shard "
                             "call too (every call gets the same policy)", unit=label))
            ctx.expect(policy.param_dtype == torch.bfloat16,
                       ctx.t("{unit} gathers parameters as {dtype}, expected torch.bfloat16",
                             unit=label, dtype=policy.param_dtype))
            ctx.expect(policy.reduce_dtype == torch.float32,
                       ctx.t("{unit} reduces gradients in {dtype}: set reduce_dtype=torch.float32 so that "
                             "averaging over ranks does not lose precision",
                             unit=label, dtype=policy.reduce_dtype or policy.param_dtype))


def _train(ctx, model, reference, device):
    """Two SGD steps, each rank on its half of the batch, against float32 training of the
    unsharded model on the whole batch."""
    rank, world = ctx.rank, ctx.world_size
    in_features, out_features = reference.inp.in_features, reference.head.out_features
    seen = {}

    def record(name):
        def hook(module, args):
            seen[name] = (module.weight.dtype, args[0].dtype)
        return hook

    handles = [m.register_forward_pre_hook(record(n)) for n, m in model.named_modules()
               if isinstance(m, nn.Linear)]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.05)
    per_rank = 4
    worst = 0.0
    for step in ctx.trials(2, ctx.t("training step")):
        x = ctx.randn(world * per_rank, in_features, device=device)
        y = ctx.randn(world * per_rank, out_features, device=device)
        mine = slice(rank * per_rank, (rank + 1) * per_rank)
        try:
            out = model(x[mine])
        except Exception as exc:
            lines = str(exc).strip().splitlines()
            ctx.fail(ctx.t("the forward pass raised {kind}: {message}", kind=type(exc).__name__,
                           message=lines[-1] if lines else ""),
                     [ctx.t("a dtype mismatch usually means one fully_shard call (often the root's) "
                            "has no mp_policy: give every call the same policy")])
        for name, (w_dtype, x_dtype) in seen.items():
            ctx.expect(w_dtype == torch.bfloat16,
                       ctx.t("`{name}` computed with {dtype} weights, expected torch.bfloat16: "
                             "pass the policy to every fully_shard call, the root's included",
                             name=name, dtype=w_dtype))
        loss = F.mse_loss(out.float(), y[mine])
        loss.backward()
        for name, p in model.named_parameters():
            ctx.expect(p.grad is not None and p.grad.dtype == torch.float32,
                       ctx.t("the gradient of `{name}` is {dtype}, expected float32 shards",
                             name=name, dtype=None if p.grad is None else p.grad.dtype))
        optimizer.step()
        optimizer.zero_grad()
        F.mse_loss(reference(x), y).backward()
        ref_opt.step()
        ref_opt.zero_grad()
        for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
            full = p.full_tensor().detach()
            worst = max(worst, (full - q.detach()).abs().max().item())
            ctx.expect_close(f"`{name}` after step {step + 1} (bfloat16 compute vs the float32 "
                             "unsharded model)", full, q.detach(), atol=5e-3, rtol=2e-2)
    for h in handles:
        h.remove()
    ctx.figure("max_param_difference_vs_fp32", worst,
               label=ctx.t("largest parameter difference from the float32 model"))
