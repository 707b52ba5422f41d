"""Check: save_program writes a real .pt2 archive (torch.export.load reads it, labels.json inside),
and load_program gives back a callable whose outputs equal the saved model's for several batch
sizes, using the weights stored in the file."""

import json

import torch
import torch.nn as nn

NAMES = ["cat", "dog", "owl", "fox", "eel", "yak", "emu", "gnu"]
FEATURES = 20


class _Classifier(nn.Module):
    def __init__(self, classes: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(FEATURES, 48), nn.GELU(), nn.LayerNorm(48))
        self.head = nn.Linear(48, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x)).log_softmax(dim=-1)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def _batch_range(ep):
    """The (lower, upper) range the program records for the batch dimension of `x`, or None."""
    for node in ep.graph.nodes:
        if node.op == "placeholder" and node.name == "x":
            size = node.meta["val"].shape[0]
            if isinstance(size, int):
                return None
            bounds = ep.range_constraints.get(size.node.expr)
            if bounds is None:
                return None
            return int(bounds.lower), (int(bounds.upper) if bounds.upper.is_finite else None)
    return None


def check(ctx):
    mine = ctx.learner
    torch.manual_seed(ctx.seed)
    count = ctx.choice([3, 4, 5, 6])
    order = torch.randperm(len(NAMES), generator=ctx.generator)[:count].tolist()
    labels = [NAMES[i] for i in order]
    if labels == sorted(labels):  # never sorted: label i names output column i, in the given order
        labels.reverse()
    model = _Classifier(len(labels)).to(ctx.device).eval()
    example_batch = ctx.choice([4, 6, 9])
    example = ctx.randn(example_batch, FEATURES)
    path = ctx.tmpdir / "classifier.pt2"

    with ctx.build(ctx.t("exporting and saving your program…"), figure="save_s", label=ctx.t("exporting and saving")):
        mine.save_program(model, example, labels, str(path))
    ctx.expect(path.is_file(), ctx.t("save_program wrote no file at the path it was given ({file})", file=path.name))
    ctx.figure("file_kb", round(path.stat().st_size / 1024, 1), label=ctx.t("size of the saved program, KB"))

    ctx.phase(ctx.t("reading the archive with torch.export.load"))
    extra = {"labels.json": ""}
    try:
        archived = torch.export.load(str(path), extra_files=extra)
    except Exception as exc:
        ctx.fail(ctx.t("torch.export.load cannot read the file save_program wrote: save it with torch.export.save "
                       "(torch.save pickles the Python object instead of writing a .pt2 archive). {error}",
                       error=_first_line(exc)))
    stored = extra["labels.json"]
    ctx.expect(bool(stored), ctx.t("the archive has no labels.json: pass extra_files={{\"labels.json\": ...}} "
                                   "to torch.export.save"))
    try:
        stored_labels = json.loads(stored)
    except ValueError:
        stored_labels = None
        ctx.fail(ctx.t("labels.json in the archive is not JSON: it starts with {start!r}. Store json.dumps(labels).",
                       start=stored[:40]))
    ctx.expect_equal("labels stored in labels.json", stored_labels, labels)

    # Expected outputs come from the model as it was saved. Then the live model's weights are
    # changed: the loaded program must use the weights in the file, not the model in memory.
    batches = [1, example_batch, ctx.choice([37, 200, 513]), 1024]
    inputs = [ctx.randn(b, FEATURES) for b in batches]
    with torch.no_grad():
        expected = [model(x) for x in inputs]
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=ctx.generator).to(p.device))

    # load_program is called outside the call contract: a memoised one (functools.lru_cache, not
    # a plain function) would otherwise fail on a mismatch of observations instead of with the
    # reason below. Whatever it leaves changed for everyone still shows at the end of the check.
    with ctx.build(ctx.t("loading your program…"), figure="load_s", label=ctx.t("loading")), ctx.uncontracted():
        loaded = mine.load_program(str(path))
    ctx.expect(isinstance(loaded, tuple) and len(loaded) == 2,
               ctx.t("load_program must return a pair (module, labels), it returned {type}",
                     type=type(loaded).__name__))
    module, loaded_labels = loaded
    ctx.expect_equal("labels returned by load_program", loaded_labels, labels)

    with torch.no_grad():
        for i in ctx.trials(len(batches), ctx.t("running the loaded program, batch")):
            try:
                out = module(inputs[i])
            except Exception as exc:
                if "ExportedProgram directly" in str(exc):
                    ctx.fail(ctx.t("load_program returned the ExportedProgram itself, which cannot be called: "
                                   "return ep.module()"))
                ctx.fail(ctx.t("the loaded program rejected batch {batch} (it was exported with batch {example}): "
                               "{error}. Export with the batch dimension dynamic, from 1 to 1024.",
                               batch=batches[i], example=example_batch, error=_first_line(exc)))
            ctx.expect_close(f"output of the loaded program for batch {batches[i]}", out, expected[i])

        ctx.phase(ctx.t("checking that batch 1025 is rejected"))
        try:
            module(ctx.randn(1025, FEATURES))
            accepted = True
        except Exception:
            accepted = False
        ctx.expect(not accepted, ctx.t("the loaded program accepted batch 1025: the task's range is 1 to 1024. "
                                       "Give the batch Dim max=1024 (Dim.AUTO and Dim.DYNAMIC without a max "
                                       "mean \"any size\")"))

    # The range the archive records is what a deployment reads (ep.module() checks no lower bound
    # of 2 or less, so batch 1 runs on a program declared from 2, and batch 0 on one from 1).
    bounds = _batch_range(archived)
    ctx.expect(bounds is None or bounds == (1, 1024),
               ctx.t("the program in the archive records the batch range {range} (ep.range_constraints), not "
                     "[1, 1024]: declare the batch Dim with min=1 and max=1024", range=list(bounds or ())))

    # A second save to the same path (another model, other labels): loading reads the file again.
    torch.manual_seed(ctx.seed + 1)
    labels2 = [NAMES[i] for i in torch.randperm(len(NAMES), generator=ctx.generator)[: count + 1].tolist()]
    if labels2 == sorted(labels2):
        labels2.reverse()
    model2 = _Classifier(len(labels2)).to(ctx.device)  # handed over in training mode
    mine.save_program(model2, ctx.randn(example_batch + 1, FEATURES), labels2, str(path))
    x = ctx.randn(7, FEATURES)
    with torch.no_grad():
        expected2 = model2(x)
    with ctx.uncontracted():
        loaded = mine.load_program(str(path))
    ctx.expect(isinstance(loaded, tuple) and len(loaded) == 2,
               ctx.t("load_program must return a pair (module, labels), it returned {type}",
                     type=type(loaded).__name__))
    module2, loaded_labels2 = loaded
    ctx.expect(loaded_labels2 != labels,
               ctx.t("after save_program wrote a new model and new labels to the same path, load_program returned the "
                     "old labels: it must read the file on every call (no cache by path)"))
    ctx.expect_equal("labels returned by load_program after a second save_program to the same path",
                     loaded_labels2, labels2)
    with torch.no_grad():
        ctx.expect_close("output of the program loaded after a second save_program to the same path, batch 7",
                         module2(x), expected2)
