"""Check: quantize_pt2e_int8 returns a converted PT2E graph (quantize/dequantize ops, int8 weights)
whose observers were calibrated on the given batches (the input's int8 range covers them), that
serves any batch size deterministically, with outputs close to the fp32 model; the caller's model
is untouched. Reports accuracy, bytes of the tensors the graph uses and latency, int8 vs fp32."""

import copy

from _common import accuracy, make_task, snapshot, train_fp32, untouched

import torch  # noqa: E402  (after _common, which quiets torchao's import notices)
from torch import nn  # noqa: E402

MAX_ERR = 0.1  # the largest output difference allowed, as a share of the largest fp32 output (reference: ~0.02)
MIN_COVER = 0.97  # share of calibration inputs inside the input's int8 range (reference: >0.995)


class Net(nn.Module):
    def __init__(self, d_in: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.drop = nn.Dropout(0.2)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        x = self.drop(torch.relu(self.fc1(x)))
        return self.head(torch.relu(self.fc2(x)))


def targets(graph):
    return [str(n.target) for n in graph.graph.nodes if n.op == "call_function"]


def used_bytes(graph):
    """Bytes of the tensors the graph reads (get_attr): int8 weights, scales, zero points, biases."""
    total = 0
    for n in graph.graph.nodes:
        if n.op == "get_attr":
            t = graph
            for part in str(n.target).split("."):
                t = getattr(t, part)
            total += t.numel() * t.element_size()
    return total


def check(ctx):
    torch.set_num_threads(1)
    mine = ctx.learner
    ctx.phase(ctx.t("training the fp32 model"))
    shift = ctx.choice([-3.0, 4.0])  # the data the model serves is not centred on zero
    (xtr, ytr), (xte, yte) = make_task(ctx.generator)
    xtr, xte = 2 * xtr + shift, 2 * xte + shift
    torch.manual_seed(ctx.seed)
    model = train_fp32(Net(32, 128, 10), xtr, ytr, ctx.generator)
    fp32 = copy.deepcopy(model).eval()
    model.train()  # straight from its training loop
    snap = snapshot(model)
    calibration = list(xtr[:512].split(64))
    # the export example only fixes shapes: a batch squeezed to a tenth of the data's spread, so
    # observers that saw it instead of the calibration batches cover ~30% of them (reference: >99.5%)
    example = shift + 0.1 * (xtr[512:576] - shift)

    ctx.phase(ctx.t("your quantize_pt2e_int8 (export, prepare, calibrate, convert)"))
    q = mine.quantize_pt2e_int8(model, example, calibration)
    ctx.expect(
        untouched(model, snap),
        ctx.t(
            "quantize_pt2e_int8 changed the model it was given (its weights or its training mode): "
            "export an eval-mode copy and leave the caller's model as it was"
        ),
    )
    ctx.expect(
        isinstance(q, nn.Module),
        ctx.t("quantize_pt2e_int8 returned {kind}, expected the converted model", kind=type(q).__name__),
    )
    ops = targets(q) if isinstance(q, torch.fx.GraphModule) else []
    ctx.expect(
        isinstance(q, torch.fx.GraphModule),
        ctx.t(
            "quantize_pt2e_int8 returned a {kind}, not a graph: PT2E works on the graph that "
            "torch.export.export(...).module() gives",
            kind=type(q).__name__,
        ),
    )
    observers = [n for n, _ in q.named_modules() if "activation_post_process" in n]
    ctx.expect(
        not observers,
        ctx.t(
            "the returned graph still has {n} observers and no int8 ops: it is the prepared model; "
            "convert it with convert_pt2e after calibration",
            n=len(observers),
        ),
    )
    quant = [t for t in ops if "quantize_per_tensor" in t and "dequantize" not in t]
    deq = [t for t in ops if "dequantize" in t]
    ctx.expect(
        quant and deq,
        ctx.t(
            "the returned graph has no quantize/dequantize ops: prepare it with prepare_pt2e and "
            "X86InductorQuantizer, calibrate, then convert_pt2e"
        ),
    )
    ctx.figure("graph_ops", {"quantize": len(quant), "dequantize": len(deq)},
               label=ctx.t("ops in the converted graph: {quantize} quantize, {dequantize} dequantize",
                           quantize=len(quant), dequantize=len(deq)))

    # the first quantize op reads the model's input: its scale and zero point come from calibration
    first = next(
        n
        for n in q.graph.nodes
        if n.op == "call_function" and "quantize_per_tensor" in str(n.target) and "dequantize" not in str(n.target)
    )
    scale, zp, qmin, qmax = (float(a) for a in first.args[1:5])
    ctx.expect(
        not (scale == 1.0 and zp == 0.0),
        ctx.t(
            "the input is quantized with scale 1.0 and zero point 0, the values of an observer that "
            "saw no data: the model was converted without calibration. Run the calibration batches "
            "through the model prepare_pt2e returned, before convert_pt2e"
        ),
    )
    lo, hi = (qmin - zp) * scale, (qmax - zp) * scale
    seen = torch.cat(calibration)
    cover = float(((seen >= lo - scale) & (seen <= hi + scale)).float().mean())
    ctx.figure("input_range", {"low": lo, "high": hi, "calibration_covered": cover},
               label=ctx.t("the input is quantized over {low:.3g} to {high:.3g}, which covers {covered:.1%} of the "
                           "calibration inputs", low=lo, high=hi, covered=cover))
    ctx.expect(
        cover >= MIN_COVER,
        ctx.t(
            "the input's int8 range [{lo:.2f}, {hi:.2f}] covers only {p:.0%} of the calibration "
            "inputs: the observers saw other data than the calibration batches you were given",
            lo=lo,
            hi=hi,
            p=cover,
        ),
    )

    for trial in ctx.trials(3):
        n = [1, 7, 200][trial]
        x = xte[:n]
        try:
            with torch.no_grad():
                a, b = q(x), q(x)
        except Exception as e:  # a graph exported for one batch size rejects the others
            ctx.fail(
                ctx.t(
                    "the quantized model fails on a batch of {n} ({err}): export with a dynamic batch "
                    "dimension (dynamic_shapes) so it serves any batch size",
                    n=n,
                    err=str(e).splitlines()[0][:120],
                )
            )
        ctx.expect(
            torch.equal(a, b),
            ctx.t(
                "the quantized model gives two different answers for the same batch: Dropout is "
                "still active, because the model was exported in training mode; export an "
                "eval-mode copy"
            ),
        )
        with torch.no_grad():
            want = fp32(x)
        ctx.expect_close(
            f"int8 output vs fp32 (batch {n})", a, want, atol=MAX_ERR * float(want.abs().max()), rtol=0, within_run=True
        )

    # the int8 graph is the caller's model frozen at this point: training the caller's model
    # further (here: every parameter moved in place) must not change it
    x = xte[:16]
    with torch.no_grad():
        before = q(x)
        moved = [(p_, p_.detach().clone()) for p_ in model.parameters()]
        for p_, _ in moved:
            p_.add_(0.5 * torch.randn(p_.shape, generator=ctx.generator))
        after = q(x)
        for p_, old in moved:
            p_.copy_(old)
    ctx.expect(
        torch.equal(before, after),
        ctx.t(
            "the int8 model changed when the caller's model was trained further: it still shares the "
            "caller's parameters (the biases, at least). Quantize a copy (copy.deepcopy) and leave the "
            "caller's model to the caller"
        ),
    )

    acc32, acc8 = accuracy(fp32, xte, yte), accuracy(q, xte, yte)
    ctx.figure("accuracy", {"fp32": acc32, "int8": acc8},
               label=ctx.t("accuracy: {fp32:.1%} in fp32, {int8:.1%} in int8", fp32=acc32, int8=acc8))
    size32 = sum(p.numel() * p.element_size() for p in fp32.parameters())
    ctx.figure("bytes_used", {"fp32": size32, "int8": used_bytes(q), "ratio": size32 / used_bytes(q)},
               label=ctx.t("memory of the weights: {fp32:.1f} KiB in fp32, {int8:.1f} KiB in int8 ({ratio:.1f}× "
                           "smaller)", fp32=size32 / 1024, int8=used_bytes(q) / 1024, ratio=size32 / used_bytes(q)))
    x = xte[:256]
    with torch.no_grad():
        ctx.time(
            lambda: q(x),
            lambda: fp32(x),
            name="int8_vs_fp32_time",
            budget_s=1.0,
            label=ctx.t("time"),
            compares=ctx.t("your PT2E int8 graph vs the fp32 model (eager: the q/dq ops run unfused)"),
            sides=(ctx.t("int8 graph"), ctx.t("fp32")),
        )
