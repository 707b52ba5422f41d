"""Shared by this chapter's checkers, which run on every torchrun rank."""

from contextlib import contextmanager

import torch.distributed as dist


@contextmanager
def process_group(backend="gloo", **init):
    """The ranks' process group (torchrun's environment says how to meet) for the duration of
    the check, destroyed afterwards whether the check passes or fails."""
    if not dist.is_initialized():
        dist.init_process_group(backend, **init)
    try:
        yield
    finally:
        dist.destroy_process_group()


def call_setup(ctx, name, setup, hint):
    """setup(), a call into the learner's sharding function `name`: an unfinished stub's
    NotImplementedError goes through, any other exception fails the check with its first line.
    `hint` is shown under the reason, already in the learner's language (pass it through ctx.t)."""
    try:
        return setup()
    except NotImplementedError:
        raise
    except Exception as exc:
        text = str(exc).strip()
        ctx.fail(ctx.t("{name} raised {kind}: {message}", name=name, kind=type(exc).__name__,
                       message=text.splitlines()[0] if text else ""), [hint])


def own_model(ctx, cls_name, reference, *args):
    """A model of the learner's own class `cls_name` (the one their file defines, so that code
    looking for its blocks with isinstance finds them), built with `args` and holding exactly
    `reference`'s weights. In the reference run it is the reference's class."""
    cls = getattr(ctx.learner, cls_name, None)
    if not isinstance(cls, type):
        ctx.fail(ctx.t("your file has no class `{name}`: keep the classes of the stub as they are", name=cls_name))
    try:
        model = cls(*args)
        model.load_state_dict(reference.state_dict())
    except Exception as exc:
        text = str(exc).strip()
        ctx.fail(ctx.t("your `{name}` is not the stub's (its parameters differ): keep the classes of the stub "
                       "as they are", name=cls_name), [text.splitlines()[0] if text else type(exc).__name__])
    return model


def mesh_ranks(mesh):
    """The ranks of a DeviceMesh, as nested lists (its shape and order)."""
    return mesh.mesh.tolist()


def sub_mesh_of_one(world):
    """A 1-D mesh of this rank alone (from a world x 1 mesh), to give a function a mesh that
    does not span the job: code that ignores its mesh argument shards over all ranks instead."""
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh("cpu", (world, 1), mesh_dim_names=("replica", "shard"))["shard"]


def functional_collectives(fn):
    """fn() under CommDebugMode: its result, and the DTensor (functional) collectives it ran,
    as {name: count} (FSDP's own c10d all-gathers and reduce-scatters are not counted)."""
    from torch.distributed.tensor.debug import CommDebugMode

    with CommDebugMode() as comm:
        out = fn()
    counts = {}
    for op, n in comm.get_comm_counts().items():
        name = str(op)
        if "_functional" in name and n:
            short = name.split(".")[-1] if "." in name else name
            counts[short] = counts.get(short, 0) + n
    return out, counts


# What one collective costs, in all-reduces of the same tensor: a ring all-reduce is a
# reduce-scatter followed by an all-gather, so each of those is half of one. Anything else
# (all-to-all, broadcast, a hand-written c10d call) counts as a whole all-reduce.
_ALL_REDUCE_SHARE = {
    "all_reduce": 1.0, "allreduce_": 1.0,
    "all_gather_into_tensor": 0.5, "allgather_": 0.5, "_allgather_base_": 0.5,
    "reduce_scatter_tensor": 0.5, "reduce_scatter_": 0.5, "_reduce_scatter_base_": 0.5,
}


def collectives(fn, functional_only=False):
    """fn() under CommDebugMode: its result and the collectives it ran, as {name: count}.
    `functional_only` keeps DTensor's (functional) ones only, leaving out FSDP's c10d
    all-gathers and reduce-scatters."""
    from torch.distributed.tensor.debug import CommDebugMode

    with CommDebugMode() as comm:
        out = fn()
    counts = {}
    for op, n in comm.get_comm_counts().items():
        name = str(op)
        if n and (not functional_only or "_functional" in name):
            short = name.split(".")[-1] if "." in name else name
            counts[short] = counts.get(short, 0) + n
    return out, counts


def all_reduce_equivalents(counts):
    """The collectives `counts` ran, in all-reduces (an all-gather or a reduce-scatter is half)."""
    return sum(_ALL_REDUCE_SHARE.get(name, 1.0) * n for name, n in counts.items())
