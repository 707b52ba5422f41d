"""Check: quantize_dynamic_int8 turns every Linear and LSTM into its dynamic int8 version, the
state_dict is at least 3.5x smaller on disk, outputs stay close to fp32, the fp32 model is left
alone. Reports sizes and int8 vs fp32 speed."""

import copy
import os

import torch
from torch import nn

from _common import quiet_quantization_warnings

MIN_RATIO = 3.5


class SeqClassifier(nn.Module):
    def __init__(self, d_in: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(d_in, hidden, batch_first=True)
        self.fc1 = nn.Linear(hidden, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc2(self.act(self.fc1(out[:, -1])))


def check(ctx):
    quiet_quantization_warnings()
    mine = ctx.learner
    torch.manual_seed(ctx.seed)
    d_in, hidden = ctx.choice([24, 32]), ctx.choice([192, 256])
    model = SeqClassifier(d_in, hidden, 10).eval()
    fp32 = copy.deepcopy(model)
    before = {k: v.clone() for k, v in model.state_dict().items()}

    ctx.phase("quantizing with your quantize_dynamic_int8")
    q = mine.quantize_dynamic_int8(model)
    ctx.expect(isinstance(q, nn.Module), f"quantize_dynamic_int8 returned {type(q).__name__}, expected the "
                                         f"quantized model (an nn.Module)")
    changed = [k for k, v in model.state_dict().items() if k not in before or not torch.equal(v, before[k])]
    swapped = type(model.lstm) is not nn.LSTM or any(type(m) is not nn.Linear for m in (model.fc1, model.fc2))
    if q is model and not swapped and not changed:
        ctx.fail("quantize_dynamic_int8 returned the fp32 model it was given, unquantized: return "
                 "the new model that quantize_dynamic gives back")
    ctx.expect(not swapped and not changed,
               "quantize_dynamic_int8 quantized the fp32 model it was given in place (its layers "
               "were replaced): the caller keeps that model as the fp32 baseline, so quantize a "
               "copy (quantize_dynamic does that unless inplace=True)")

    dyn = torch.ao.nn.quantized.dynamic
    for name, sub in q.named_modules():
        if type(sub) in (nn.Linear, nn.LSTM):
            ctx.fail(f"layer `{name}` is still a float {type(sub).__name__}: include "
                     f"nn.{type(sub).__name__} in the set of layer types to quantize")
    for name in ("lstm", "fc1", "fc2"):
        sub = q.get_submodule(name)
        ctx.expect(isinstance(sub, (dyn.LSTM, dyn.Linear)),
                   f"layer `{name}` is a {type(sub).__name__}, expected a dynamically quantized "
                   f"{'LSTM' if name == 'lstm' else 'Linear'}")
        w = sub._packed_params._weight_bias()[0] if name != "lstm" else None
        if w is not None:
            ctx.expect(w.dtype == torch.qint8, f"layer `{name}` stores its weight as {w.dtype}, expected "
                                               f"torch.qint8 (dtype=torch.qint8)")

    ctx.phase("saving both state_dicts")
    path_fp32, path_int8 = ctx.tmpdir / "fp32.pt", ctx.tmpdir / "int8.pt"
    reported = mine.state_dict_bytes(fp32, str(path_fp32))
    ctx.expect(path_fp32.exists(), f"state_dict_bytes did not write the file it was given ({path_fp32.name})")
    ctx.expect(reported == os.path.getsize(path_fp32),
               f"state_dict_bytes returned {reported!r}, but the file it wrote has "
               f"{os.path.getsize(path_fp32)} bytes")
    try:
        saved = torch.load(path_fp32, weights_only=True)
    except Exception:
        saved = None
    ctx.expect(isinstance(saved, dict) and set(saved) == set(fp32.state_dict()),
               "the file state_dict_bytes wrote is not the model's state_dict (torch.load with "
               "weights_only=True cannot read it as one): save model.state_dict(), not the model "
               "object, whose pickle also depends on your code's classes")
    size_fp32 = os.path.getsize(path_fp32)
    torch.save(q.state_dict(), path_int8)
    size_int8 = os.path.getsize(path_int8)
    ratio = size_fp32 / size_int8
    ctx.figure("state_dict_bytes", {"fp32": size_fp32, "int8": size_int8, "ratio": ratio})
    ctx.expect(ratio >= MIN_RATIO,
               f"the int8 state_dict is only {ratio:.2f}x smaller than fp32 ({size_int8} vs {size_fp32} "
               f"bytes), expected at least {MIN_RATIO}x: quantize every Linear and LSTM to torch.qint8")

    for trial in ctx.trials(3):
        batch, steps = ctx.choice([1, 5, 16]), ctx.choice([3, 7, 12])
        x = ctx.randn(batch, steps, d_in)
        with torch.no_grad():
            want, got = fp32(x), q(x)
        scale = float(want.abs().max())
        ctx.expect_close(f"int8 output vs fp32 (batch {batch}, {steps} steps)", got, want,
                         atol=0.05 * scale, rtol=0.05)

    x = ctx.randn(32, 16, d_in)
    with torch.no_grad():
        ctx.time(lambda: q(x), lambda: fp32(x), name="int8_vs_fp32_time", budget_s=1.0,
                 compares="your int8 model vs the fp32 model")
