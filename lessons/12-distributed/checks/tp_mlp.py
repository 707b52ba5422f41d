"""Check: the tensor-parallel MLP stack matches the unsharded model, forward and backward,
every w1/w3/w2 is really sharded over the mesh it was given (each rank holds 1/mesh size of
it), and a forward pass runs one all-reduce per block. Twice: over the job's mesh, and a second
model (the other number of blocks) over a mesh of this rank alone.

Runs on every torchrun rank; each rank judges its own output.
"""

import re

import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard

from _common import call_setup, functional_collectives, mesh_ranks, own_model, process_group, sub_mesh_of_one

_PRIVATE = re.compile(r"^\s*(from|import)\s+torch\.distributed\._tensor\b", re.MULTILINE)


def _plain(t):
    """The parallel model's output as an ordinary tensor (an AsyncCollectiveTensor is waited on)."""
    wait = getattr(t, "wait", None)
    return wait() if callable(wait) and not isinstance(t, DTensor) else t


def _expect_sharded(ctx, name, p, placement, mesh):
    if not isinstance(p, DTensor):
        ctx.fail(ctx.t("`{name}` is an ordinary tensor: it was not sharded. Is this layer in your plan?", name=name))
    world = mesh.size()
    ctx.expect(mesh_ranks(p.device_mesh) == mesh_ranks(mesh),
               ctx.t("`{name}` is sharded over the ranks {have}, not over the mesh it was given ({want}): "
                     "parallelize over the `mesh` argument, not over a mesh of your own",
                     name=name, have=mesh_ranks(p.device_mesh), want=mesh_ranks(mesh)))
    if ".w2.bias" in name:
        why = ctx.t("w2's bias is added once, after the all-reduce, so it stays replicated (RowwiseParallel)")
    elif ".w2." in name:
        why = ctx.t("w2 splits its input features (RowwiseParallel)")
    else:
        why = ctx.t("w1 and w3 split their output features (ColwiseParallel)")
    ctx.expect(tuple(p.placements) == (placement,),
               ctx.t("`{name}` has placements ({have}), expected ({want}): {why}", name=name,
                     have=", ".join(map(repr, p.placements)), want=repr(placement), why=why))
    full = p.shape
    local = p.to_local().shape
    dim = placement.dim if isinstance(placement, Shard) else None
    if dim is not None:
        expected = list(full)
        expected[dim] = full[dim] // world
        ctx.expect(list(local) == expected,
                   ctx.t("`{name}`: this rank holds a {local} piece, expected {expected} (1/{world} of {full})",
                         name=name, local=tuple(local), expected=tuple(expected), world=world, full=tuple(full)))


def check(ctx):
    with process_group():
        _check(ctx)


def _check(ctx):
    world = ctx.world_size
    source = ctx.learner_path.read_text(encoding="utf-8") if ctx.learner_path else ""
    ctx.expect(not _PRIVATE.search(source),
               ctx.t("you import from the private torch.distributed._tensor: DTensor, Shard and "
                     "Replicate live in the public torch.distributed.tensor"))

    dim = ctx.choice([12, 16, 24])
    hidden = world * ctx.choice([9, 14, 19])
    n_layers = ctx.choice([2, 3])
    # the job's mesh, all three shapes, the collectives counted
    _run(ctx, init_device_mesh("cpu", (world,)), ctx.seed, dim, hidden, n_layers,
         [(5, dim), (2, 7, dim), (1, 1, dim)], "", ctx.t("parallelizing your model"))
    # "every block over the mesh it is given": a second model, the other number of blocks, on a
    # mesh of this rank alone (code that builds its own mesh, or names two blocks, fails here)
    _run(ctx, sub_mesh_of_one(world), ctx.seed + 1, dim, hidden, 5 - n_layers, [(3, dim)], "1-rank mesh: ",
         ctx.t("parallelizing a second model over a mesh of this rank alone"))


def _run(ctx, mesh, seed, dim, hidden, n_layers, shapes, prefix, phase):
    world = mesh.size()
    ref_mod = ctx.reference
    torch.manual_seed(seed)
    reference = ref_mod.MLPStack(dim, hidden, n_layers)
    model = own_model(ctx, "MLPStack", reference, dim, hidden, n_layers)

    ctx.phase(phase)
    returned = call_setup(ctx, "parallelize_mlp", lambda: ctx.learner.parallelize_mlp(model, mesh),
                          ctx.t("the plan maps module names such as 'layers.0.w1' (or 'layers.*.w1') to "
                                "ColwiseParallel() / RowwiseParallel()"))
    ctx.expect(returned is model,
               ctx.t("parallelize_mlp returned {kind} instead of the model it was given: shard the model "
                     "in place and return it (parallelize_module returns the module it was given)",
                     kind=type(returned).__name__ if returned is not None else "None"))

    for i in range(n_layers):
        layer = model.layers[i]
        _expect_sharded(ctx, f"layers.{i}.w1.weight", layer.w1.weight, Shard(0), mesh)
        _expect_sharded(ctx, f"layers.{i}.w1.bias", layer.w1.bias, Shard(0), mesh)
        _expect_sharded(ctx, f"layers.{i}.w3.weight", layer.w3.weight, Shard(0), mesh)
        _expect_sharded(ctx, f"layers.{i}.w3.bias", layer.w3.bias, Shard(0), mesh)
        _expect_sharded(ctx, f"layers.{i}.w2.weight", layer.w2.weight, Shard(1), mesh)
        _expect_sharded(ctx, f"layers.{i}.w2.bias", layer.w2.bias, Replicate(), mesh)

    if world > 1:
        local = sum(p.to_local().numel() if isinstance(p, DTensor) else p.numel() for p in model.parameters())
        total = sum(p.numel() for p in reference.parameters())
        ctx.figure("parameters", {"this_rank": local, "whole_model": total},
                   label=ctx.t("parameters on rank 0: {local} of the model's {total}", local=local, total=total))

    for trial in ctx.trials(len(shapes)):
        shape = shapes[trial]
        x = ctx.randn(*shape)            # same seed on every rank: every rank sees the same input
        g = ctx.randn(*shape)
        x_tp = x.clone().requires_grad_()
        x_ref = x.clone().requires_grad_()
        model.zero_grad(set_to_none=True)
        reference.zero_grad(set_to_none=True)
        try:
            out, comms = functional_collectives(lambda: model(x_tp))
        except Exception as exc:
            message = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
            if "mixed torch.Tensor and DTensor" in message:
                advice = ctx.t("a block handed a DTensor to plain tensor code (the residual add): keep "
                               "use_local_output=True, the default, so every block returns an ordinary tensor")
            else:
                advice = ctx.t("ColwiseParallel leaves each rank with a slice of the hidden features, so "
                               "the next layer must be RowwiseParallel; w1 and w3 must be split alike")
            ctx.fail(ctx.t("the parallelized model raised {kind} on an input of shape {shape}; {advice}",
                           kind=type(exc).__name__, shape=tuple(shape), advice=advice), [message])
        if isinstance(out, DTensor):
            ctx.fail(ctx.t("the model returns a DTensor: RowwiseParallel's default output "
                           "(Replicate, use_local_output=True) gives back an ordinary tensor"))
        out = _plain(out)
        expected = reference(x_ref)
        ctx.expect_close(f"{prefix}output for input shape {tuple(shape)}", out, expected, atol=1e-5, rtol=1e-4)
        if world > 1:
            # the reference: one all-reduce per block (w2's partial sums) and nothing else; a
            # plan that gathers w1/w3's output and re-slices it adds two all-gathers per block
            want = {"all_reduce": n_layers}
            ctx.expect(comms == want,
                       ctx.t("one forward pass of the {n} blocks ran the collectives {have}, expected only "
                             "{want}: one all-reduce per block. Keep the hidden features sharded between "
                             "the layers (ColwiseParallel's and RowwiseParallel's default layouts): the slice "
                             "w1 and w3 leave on a rank is the slice w2 needs",
                             n=n_layers, have=comms, want=want))
        (out * g).sum().backward()
        (expected * g).sum().backward()
        ctx.expect_close(f"{prefix}gradient of the input (shape {tuple(shape)})", x_tp.grad, x_ref.grad,
                         atol=1e-5, rtol=1e-4)
        for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
            grad = p.grad.full_tensor() if isinstance(p.grad, DTensor) else p.grad
            ctx.expect(grad is not None, ctx.t("`{name}` got no gradient", name=name))
            ctx.expect_close(f"{prefix}gradient of `{name}`", grad, q.grad, atol=1e-5, rtol=1e-4)
