"""Check: export_pooler returns an ExportedProgram that runs for batch 1..100 with the eager
model's outputs, and rejects batch 101 with an error."""

import torch
from torch.export import ExportedProgram

SEQ, FEATURES, MAX_BATCH = 10, 12, 100


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = text.splitlines()
    summary = f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")
    # Constraint violations put the useful sentence on a "  - ..." line below the headline.
    bullet = next((line.strip()[2:] for line in lines[1:] if line.strip().startswith("- ")), None)
    return f"{summary} {bullet}" if bullet else summary


def _inputs(ctx, batch: int):
    tokens = ctx.randn(batch, SEQ, FEATURES)
    mask = ctx.rand(batch, SEQ) > 0.3
    return tokens, mask


def _batch_range(ep: ExportedProgram):
    """The (lower, upper) range export recorded for the batch dimension of `tokens`, or None."""
    for node in ep.graph.nodes:
        if node.op == "placeholder" and node.name == "tokens":
            size = node.meta["val"].shape[0]
            if isinstance(size, int):
                return None
            bounds = ep.range_constraints.get(size.node.expr)
            if bounds is None:
                return None
            upper = bounds.upper
            return int(bounds.lower), (int(upper) if upper.is_finite else None)
    return None


def check(ctx):
    mine = ctx.learner
    torch.manual_seed(ctx.seed)
    model = ctx.reference.Pooler(FEATURES).to(ctx.device).eval()
    example_batch = ctx.choice([3, 5, 7, 13])
    tokens, mask = _inputs(ctx, example_batch)

    with ctx.build(ctx.t("exporting your model…"), figure="export_s", label=ctx.t("exporting your model")):
        try:
            ep = mine.export_pooler(model, tokens, mask)
        except NotImplementedError:
            raise
        except Exception as exc:
            text, details = str(exc), str(exc).strip().splitlines()[1:12]
            if "must always be equal" in text:
                ctx.fail(ctx.t("torch.export failed inside export_pooler: {error}. tokens and mask always have the "
                               "same batch (the model multiplies them): give both inputs' dimension 0 one and the "
                               "same Dim", error=_first_line(exc)), details)
            if "specialized it to be a constant" in text:
                ctx.fail(ctx.t("torch.export failed inside export_pooler: {error}. An input left out of "
                               "dynamic_shapes keeps the example's batch, and the model ties the other input's "
                               "batch to it: mark dimension 0 of both inputs", error=_first_line(exc)), details)
            ctx.fail(ctx.t("torch.export failed inside export_pooler: {error}", error=_first_line(exc)), details)
    ctx.expect(isinstance(ep, ExportedProgram),
               ctx.t("export_pooler must return the ExportedProgram from torch.export.export, it returned {type}",
                     type=type(ep).__name__))
    program = ep.module()

    batches = [1, 2, ctx.choice([17, 31, 64]), ctx.choice([77, 99]), MAX_BATCH]
    with torch.no_grad():
        for i in ctx.trials(len(batches), ctx.t("running the exported program, batch")):
            batch = batches[i]
            tokens, mask = _inputs(ctx, batch)
            try:
                out = program(tokens, mask)
            except Exception as exc:
                ctx.fail(ctx.t("the exported program rejected batch {batch} (it was exported with batch {example}): "
                               "{error}. Batches 1 to {max} must all run: mark dimension 0 of both inputs dynamic.",
                               batch=batch, example=example_batch, error=_first_line(exc), max=MAX_BATCH))
            ctx.expect_close(f"output for batch {batch}", out, model(tokens, mask))

        ctx.phase(ctx.t("checking that batch {batch} is rejected", batch=MAX_BATCH + 1))
        for batch in (MAX_BATCH + 1, 2 * MAX_BATCH):
            tokens, mask = _inputs(ctx, batch)
            try:
                program(tokens, mask)
                accepted = True
            except Exception:
                accepted = False
            ctx.expect(not accepted,
                       ctx.t("the exported program accepted batch {batch}: it must reject batches above {max}. "
                             "Give the batch Dim max={max} (Dim.AUTO and Dim.DYNAMIC without a max mean "
                             "\"any size\").", batch=batch, max=MAX_BATCH))

        # The sequence length and the feature size stay fixed: only the batch is dynamic.
        for seq in (SEQ + 1, SEQ - 3):
            tokens, mask = ctx.randn(2, seq, FEATURES), ctx.rand(2, seq) > 0.3
            try:
                program(tokens, mask)
                accepted = True
            except Exception:
                accepted = False
            ctx.expect(not accepted,
                       ctx.t("the exported program accepted sequences of {seq} positions: the sequence length stays "
                             "fixed at {fixed}. Mark only dimension 0 (the batch) dynamic", seq=seq, fixed=SEQ))

    # The range the program records is the contract a deployment reads (ep.module() does not
    # check lower bounds of 2 or less, so batch 1 can run on a program declared from 2).
    bounds = _batch_range(ep)
    if bounds is not None and bounds[1] is not None:
        ctx.figure("batch_range", {"min": bounds[0], "max": bounds[1]},
                   label=ctx.t("batch sizes your program accepts: {min} to {max}", min=bounds[0], max=bounds[1]))
    ctx.expect(bounds == (1, MAX_BATCH),
               ctx.t("your program records the batch range {range} (ep.range_constraints), not [1, {max}]: declare the "
                     "batch Dim with min=1 and max={max}", range="none" if bounds is None else list(bounds),
                     max=MAX_BATCH))

    # A second Pooler (other weights, handed over in training mode) and another example batch:
    # export_pooler exports the model it is given, every call.
    torch.manual_seed(ctx.seed + 1)
    second = ctx.reference.Pooler(FEATURES).to(ctx.device)
    tokens, mask = _inputs(ctx, ctx.choice([4, 6, 9]))
    ep2 = mine.export_pooler(second, tokens, mask)
    ctx.expect(isinstance(ep2, ExportedProgram),
               ctx.t("export_pooler must return the ExportedProgram from torch.export.export, it returned {type}",
                     type=type(ep2).__name__))
    tokens, mask = _inputs(ctx, 11)
    with torch.no_grad():
        out = ep2.module()(tokens, mask)
        stale = out.shape == model(tokens, mask).shape and torch.allclose(out, model(tokens, mask))
        ctx.expect(not stale,
                   ctx.t("export_pooler called with a second Pooler returned a program with the first Pooler's "
                         "weights: export the model you are given, on every call (no cache by class or by shape)"))
        ctx.expect_close("output of the program exported from a second Pooler (other weights), batch 11", out,
                         second(tokens, mask))
