"""Check: a DCP checkpoint saved by every rank of an FSDP2 model is really sharded (one data
file per rank, each about 1/world of the model's bytes, plus the metadata) and loads into an
ordinary unsharded model with exactly the values of the sharded one, into its own parameters.
Twice, into the same directory, so a second save must replace the first; a file the caller
puts in that directory between the saves must survive the second.

Runs on every torchrun rank. The manifest runs it with 2 ranks, then 4; with 4, one round only.
"""

import copy
import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor

from _common import call_setup, own_model, process_group


def check(ctx):
    with process_group():
        _check(ctx)


def _check(ctx):
    rank, world = ctx.rank, ctx.world_size
    ref_mod = ctx.reference
    dim, n_layers, out_features = ctx.choice([8, 13]), ctx.choice([2, 3]), ctx.choice([2, 3])
    torch.manual_seed(ctx.seed)
    model = own_model(ctx, "Net", ref_mod.Net(dim, n_layers, out_features), dim, n_layers, out_features)
    mesh = init_device_mesh("cpu", (world,))
    for layer in model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    where = [os.path.join(ctx.tmpdir, "ckpt") if rank == 0 else None]
    dist.broadcast_object_list(where)              # one directory, the same on every rank
    path = where[0]
    # before the second save the caller keeps something of its own in that directory: a save
    # adds its files, it does not clear the directory first
    keep = os.path.join(path, "run_notes.txt")
    note = f"seed {ctx.seed}: notes the caller keeps next to its checkpoint\n"
    total_bytes = sum(v.numel() * v.element_size() for v in model.state_dict().values())

    # With 2 ranks (the first world size) two rounds into the same directory; with more, one
    # round, which is where code that assumes two ranks goes wrong (a second save into the same
    # directory does not depend on the number of ranks).
    for round_ in ctx.trials(2 if world == 2 else 1, ctx.t("save and load")):
        x, y = ctx.randn(2 * world, dim), ctx.randn(2 * world, out_features)
        mine = slice(rank * 2, rank * 2 + 2)
        F.mse_loss(model(x[mine]), y[mine]).backward()   # new values for every round
        optimizer.step()
        optimizer.zero_grad()
        saved = {k: v.full_tensor().clone() for k, v in model.state_dict().items()}
        local = {k: v.to_local().clone() for k, v in model.state_dict().items()}

        if round_ == 1:
            if rank == 0:
                with open(keep, "w", encoding="utf-8") as f:
                    f.write(note)
            dist.barrier()
        ctx.phase(ctx.t("saving with your save_sharded"))
        call_setup(ctx, "save_sharded", lambda: ctx.learner.save_sharded(model, path),
                   ctx.t("every rank calls dcp.save(state_dict, checkpoint_id=path)"))
        dist.barrier()
        if round_ == 1:
            try:
                with open(keep, encoding="utf-8") as f:
                    kept = f.read() == note
            except OSError:
                kept = False
            ctx.expect(kept,
                       ctx.t("save_sharded deleted or rewrote {file}, a file the caller keeps in the directory "
                             "{path}: a save writes its own files into the directory and leaves everything else "
                             "there as it was (do not remove the directory first)",
                             file=repr(os.path.basename(keep)), path=repr(path)))
        for k, v in model.state_dict().items():
            ctx.expect(isinstance(v, DTensor) and torch.equal(v.to_local(), local[k]),
                       ctx.t("save_sharded changed the model's `{name}`: saving must leave the sharded model "
                             "as it was", name=k))
        files = sorted(os.listdir(path)) if os.path.isdir(path) else []
        ctx.expect(os.path.isdir(path) and ".metadata" in files,
                   ctx.t("{path} is not a DCP checkpoint directory (no .metadata file): save with "
                         "torch.distributed.checkpoint.save(..., checkpoint_id=path) on every rank, not torch.save",
                         path=repr(path)))
        data = [f for f in files if f.endswith(".distcp")]
        ctx.expect(len(data) == world,
                   ctx.t("the checkpoint has {count} data files, expected one per rank ({world})",
                         count=len(data), world=world))
        # sharded: every tensor of 2 or more rows is stored as one chunk per rank; a save of full
        # tensors stores each as a single chunk (DCP writes a replicated value once)
        tensors = {k: m for k, m in dcp.FileSystemReader(path).read_metadata().state_dict_metadata.items()
                   if hasattr(m, "chunks")}
        whole = sorted(k for k, m in tensors.items() if len(m.size) and m.size[0] >= world and len(m.chunks) < world)
        ctx.figure("checkpoint", {"data_files": len(data), "tensors": len(tensors),
                                  "stored_in_one_piece": len(whole), "model_bytes": total_bytes},
                   label=ctx.t("the checkpoint: {files} data files holding {tensors} tensors, {whole} of them stored "
                               "in one piece; the model's state is {kib:.1f} KiB", files=len(data),
                               tensors=len(tensors), whole=len(whole), kib=total_bytes / 1024))
        ctx.expect(len(tensors) >= len(saved),
                   ctx.t("the checkpoint holds {count} tensors, the model has {want}: save the whole state dict",
                         count=len(tensors), want=len(saved)))
        ctx.expect(not whole,
                   ctx.t("`{name}` is stored as one full tensor, not as one shard per rank: the checkpoint is "
                         "not sharded. Save the sharded state dict (model.state_dict(), DTensors) so that every "
                         "rank writes only its own shards, not full tensors", name=whole[0] if whole else ""))

        ctx.phase(ctx.t("loading into an unsharded model"))
        torch.manual_seed(ctx.seed + 1 + round_)      # other weights, to be overwritten
        plain = own_model(ctx, "Net", ref_mod.Net(dim, n_layers, out_features), dim, n_layers, out_features)
        own = dict(plain.named_parameters())
        call_setup(ctx, "load_full", lambda: ctx.learner.load_full(plain, path),
                   ctx.t("dcp.load(state_dict, checkpoint_id=path) fills the tensors of the state dict you pass"))
        for k, p in plain.named_parameters():
            ctx.expect(own.get(k) is p,
                       ctx.t("load_full replaced the unsharded model's `{name}` with a new tensor instead of "
                             "filling its own parameter in place: whoever holds the old one (an optimizer, a "
                             "tied weight) keeps the initial values. Copy the values in (load_state_dict "
                             "without assign=True, or dcp.load into the model's own state dict)", name=k))
        state = plain.state_dict()
        for k in saved:
            v = state[k]
            ctx.expect(not isinstance(v, DTensor),
                       ctx.t("the unsharded model's `{name}` became a DTensor: load into the plain model's own "
                             "tensors", name=k))
            label = (f"`{k}` in the unsharded model after load_full (round {round_ + 1}, compared with "
                     "the sharded model that was saved)")
            ctx.expect_close(label, v, saved[k], atol=0, rtol=0, within_run=True)
