"""Check: a pipeline-parallel split with torch.distributed.pipelining. Every layer in exactly one
stage (the model's own layers, in order), a schedule over the requested micro-batches, and
after one schedule step the micro-batch losses and every rank's gradients equal one process's
on the whole batch. The check runs with 2 ranks and then with 4 (a split that holds only for two
shows at 4); with 2 it also builds the stages of a longer pipeline (3 or 4 stages) for every
stage index without running them.

Runs on every torchrun rank; each rank judges its own stage.
"""

from collections import Counter

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _common import call_setup, own_model, process_group
from torch.distributed.pipelining.schedules import PipelineScheduleSingle


def check(ctx):
    with process_group():
        _check(ctx)


def _check(ctx):
    rank, world = ctx.rank, ctx.world_size
    ref_mod = ctx.reference
    dim, out_features = ctx.choice([6, 9]), ctx.choice([2, 3])
    n_layers = world * ctx.choice([1, 2])
    # at least as many micro-batches as stages, which 1F1B needs (2 or 3 with 2 ranks, 4 or 5 with 4)
    n_micro, rows = ctx.choice([world, world + 1]), ctx.choice([2, 3])
    torch.manual_seed(ctx.seed)
    single = ref_mod.Net(dim, n_layers, out_features)
    model = own_model(ctx, "Net", single, dim, n_layers, out_features)
    names = {id(p): n for n, p in model.named_parameters()}

    ctx.phase(ctx.t("building your pipeline stage"))
    result = call_setup(ctx, "build_pipeline",
                        lambda: ctx.learner.build_pipeline(model, rank, world, n_micro),
                        ctx.t("wrap this rank's part in PipelineStage(module, rank, world, device) and "
                              "give it to ScheduleGPipe(stage, n_microbatches, loss_fn=...)"))
    if not (isinstance(result, tuple) and len(result) == 2):
        ctx.fail(ctx.t("build_pipeline must return (stage_module, schedule)"))
    stage_module, schedule = result
    ctx.expect(isinstance(schedule, PipelineScheduleSingle),
               ctx.t("the schedule is a {kind}, expected a single-stage schedule such as ScheduleGPipe "
                     "or Schedule1F1B", kind=type(schedule).__name__))
    ctx.expect(getattr(schedule, "_n_microbatches", n_micro) == n_micro,
               ctx.t("the schedule splits the batch into {count} micro-batches, expected n_microbatches={n} "
                     "(the argument)", count=getattr(schedule, "_n_microbatches", "?"), n=n_micro))
    params = list(stage_module.parameters())
    ctx.expect(all(id(p) in names for p in params),
               ctx.t("the stage module holds parameters that are not the model's own: build it from the "
                     "model's layers (model.layers[...], model.head), not from copies"))
    mine = [names[id(p)] for p in params]
    everyone = [None] * world
    dist.all_gather_object(everyone, mine)
    counts = Counter(n for part in everyone for n in part)
    twice = [n for n, c in counts.items() if c > 1]
    ctx.expect(not twice, ctx.t("`{name}` is in the stages of {count} ranks: every layer belongs to exactly "
                                "one stage", name=twice[0] if twice else "", count=counts[twice[0]] if twice else 0))
    nowhere = [n for n in names.values() if counts[n] == 0]
    ctx.expect(not nowhere, ctx.t("`{name}` is in no rank's stage: the stages together must hold the whole model",
                                  name=nowhere[0] if nowhere else ""))
    per_stage = n_layers // world
    want = [f"layers.{i}" for i in range(rank * per_stage, (rank + 1) * per_stage)]
    want += ["head"] if rank == world - 1 else []
    have = sorted({".".join(n.split(".")[:2]) if n.startswith("layers.") else n.split(".")[0] for n in mine},
                  key=lambda k: (k == "head", k))
    ctx.expect(have == want,
               ctx.t("rank {rank}'s stage holds {have}, expected {want}: split the blocks evenly in order, "
                     "the head on the last stage", rank=rank, have=have, want=want))

    ctx.phase(ctx.t("one pipelined training step"))
    x = ctx.randn(n_micro * rows, dim)        # the whole batch, equal on every rank
    y = ctx.randn(n_micro * rows, out_features)
    losses = []
    if rank == 0:
        schedule.step(x.clone())
    elif rank == world - 1:
        schedule.step(target=y.clone(), losses=losses)
    else:
        schedule.step()
    F.mse_loss(single(x), y).backward()       # one process, the whole batch
    if rank == world - 1:
        with torch.no_grad():
            want_losses = torch.stack([F.mse_loss(single(a), b) for a, b in zip(x.chunk(n_micro), y.chunk(n_micro))])
        ctx.expect(len(losses) == n_micro,
                   ctx.t("the last stage produced {count} micro-batch losses, expected {n}",
                         count=len(losses), n=n_micro))
        ctx.expect_close("micro-batch losses on the last stage", torch.stack([t.detach() for t in losses]).reshape(-1),
                         want_losses, atol=1e-5, rtol=1e-4)
    ref_params = dict(single.named_parameters())
    for name in sorted(mine):
        p, q = dict(model.named_parameters())[name], ref_params[name]
        if p.grad is None:
            ctx.fail(ctx.t("`{name}` got no gradient from the schedule step: is it part of the stage module "
                           "that PipelineStage wraps?", name=name))
        ratio = (p.grad.norm() / q.grad.norm()).item() if q.grad.norm() > 0 else 1.0
        ctx.expect(abs(ratio - n_micro) > 0.01 * n_micro,
                   ctx.t("the gradient of `{name}` is {ratio:.3g} times the single-process one: the "
                         "{n} micro-batch gradients were summed, not averaged (keep the schedule's "
                         "scale_grads=True with a mean loss)", name=name, ratio=ratio, n=n_micro))
        ctx.expect_close(f"gradient of `{name}` (compared with one process on the whole batch)",
                         p.grad, q.grad, atol=1e-5, rtol=1e-4)
    stage = {"rank": rank, "parameters_here": sum(p.numel() for p in params),
             "whole_model": sum(p.numel() for p in single.parameters()), "micro_batches": n_micro}
    ctx.figure("stage", stage,
               label=ctx.t("the stage on rank {rank}: {parameters_here} of the model's {whole_model} parameters, "
                           "{micro_batches} micro-batches a step", **stage))

    # "cut the model into `world` consecutive stages", for any world: the stages of a longer
    # pipeline (3 or 4 stages of 2 blocks), built for every stage index but not run (building a
    # stage communicates nothing). A split fixed for two ranks, or blocks dealt out round-robin,
    # shows here. Only with 2 ranks: a PipelineStage needs at least as many stages as the group
    # has ranks, and with 4 the run above is a longer pipeline already.
    if world != 2:
        return
    ctx.phase(ctx.t("building the stages of a longer pipeline"))
    stages = ctx.choice([3, 4])
    per_stage = 2
    torch.manual_seed(ctx.seed + 1)
    longer = own_model(ctx, "Net", ref_mod.Net(dim, stages * per_stage, out_features),
                       dim, stages * per_stage, out_features)
    long_names = {id(p): n for n, p in longer.named_parameters()}
    for stage_index in range(stages):
        result = call_setup(ctx, "build_pipeline",
                            lambda: ctx.learner.build_pipeline(longer, stage_index, stages, stages),
                            ctx.t("use the arguments: this stage's blocks are "
                                  "model.layers[rank * per_stage:(rank + 1) * per_stage] with "
                                  "per_stage = len(model.layers) // world"))
        if not (isinstance(result, tuple) and len(result) == 2):
            ctx.fail(ctx.t("build_pipeline must return (stage_module, schedule)"))
        part, schedule = result
        mine = [long_names.get(id(p), "?") for p in part.parameters()]
        want = [f"layers.{i}" for i in range(stage_index * per_stage, (stage_index + 1) * per_stage)]
        want += ["head"] if stage_index == stages - 1 else []
        have = sorted({".".join(n.split(".")[:2]) if n.startswith("layers.") else n.split(".")[0] for n in mine},
                      key=lambda k: (k == "head", k))
        ctx.expect(have == want,
                   ctx.t("for a pipeline of {world} stages ({blocks} blocks), build_pipeline(model, {rank}, "
                         "{world}, ...) gives a stage of {have}, expected {want}: the blocks split evenly in "
                         "order by the rank and world arguments, for any number of stages, the head on the "
                         "last one", world=stages, blocks=stages * per_stage, rank=stage_index, have=have,
                         want=want))
        ctx.expect(getattr(schedule, "_n_microbatches", stages) == stages,
                   ctx.t("the schedule splits the batch into {count} micro-batches, expected n_microbatches={n} "
                         "(the argument)", count=getattr(schedule, "_n_microbatches", "?"), n=stages))
