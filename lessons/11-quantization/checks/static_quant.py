"""Check: quantize_static_int8 returns a calibrated, converted int8 model (static, not dynamic) whose
accuracy on a synthetic task generated from the run's seed is within 2 points of the fp32 model.
Reports both accuracies, the state_dict sizes and int8 vs fp32 speed."""

import copy
import io

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from _common import MAX_DROP, accuracy, quiet_quantization_warnings, trained_fp32_model


def state_dict_bytes(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return len(buf.getvalue())


def expect_int8_modules(ctx, q, what):
    """Every Linear of q is a converted static int8 module, and the input was calibrated."""
    nnq, nniq = torch.ao.nn.quantized, torch.ao.nn.intrinsic.quantized
    for name in ("fc1", "fc2", "fc3"):
        sub = q.get_submodule(name)
        if isinstance(sub, torch.ao.nn.quantized.dynamic.Linear):
            ctx.fail(f"`{name}` is a dynamically quantized Linear: that is dynamic quantization. "
                     f"Static quantization needs a qconfig, prepare, calibration and convert")
        ctx.expect(isinstance(sub, (nnq.Linear, nniq.LinearReLU)),
                   f"`{name}` is a {type(sub).__module__}.{type(sub).__name__}, not an int8 module: "
                   f"{what} must end with convert(...)")
        if name != "fc3":
            ctx.expect(isinstance(sub, nniq.LinearReLU),
                       f"`{name}` is an int8 Linear with a separate ReLU, not a fused LinearReLU: the "
                       f"FUSE pairs were not fused. fuse_modules returns the fused model (unless "
                       f"inplace=True): go on with the model it returns")
    quant = q.get_submodule("quant")
    ctx.expect(isinstance(quant, nnq.Quantize),
               f"`quant` is a {type(quant).__name__}, expected a converted Quantize module")
    scale, zero = float(quant.scale), int(quant.zero_point)
    ctx.expect(not (scale == 1.0 and zero == 0),
               "the input's quantization scale is 1.0 with zero point 0, the value observers give "
               "when they have seen no data: run the calibration batches through the prepared model "
               "before convert")


def check(ctx):
    quiet_quantization_warnings()
    mine = ctx.learner
    model, acc32, (xtr, ytr), (xte, yte) = trained_fp32_model(ctx)
    fp32 = copy.deepcopy(model)

    ctx.phase("your quantize_static_int8: prepare, calibrate, convert")
    calib = DataLoader(TensorDataset(xtr[:512], ytr[:512]), batch_size=128)
    # handed over in training mode, as a model straight from its training loop would be
    q = mine.quantize_static_int8(copy.deepcopy(model).train(), calib)
    ctx.expect(isinstance(q, nn.Module), f"quantize_static_int8 returned {type(q).__name__}, expected the "
                                         f"quantized model")
    ctx.expect(not q.training, "the quantized model is in training mode (the model was handed over "
                               "in training mode, straight from training): switch to eval mode "
                               "before fusing, and return the int8 model in eval mode")
    expect_int8_modules(ctx, q, "quantize_static_int8")

    acc8 = accuracy(q, xte, yte)
    ctx.figure("accuracy", {"fp32": acc32, "int8": acc8})
    ctx.expect(acc8 >= acc32 - MAX_DROP,
               f"int8 accuracy {acc8:.1%} is {100 * (acc32 - acc8):.1f} points below fp32 ({acc32:.1%}) on "
               f"{len(yte)} test samples; at most {100 * MAX_DROP:.0f} points are allowed. Check the "
               f"qconfig and that calibration runs representative data through the prepared model")

    size32, size8 = state_dict_bytes(fp32), state_dict_bytes(q)
    ctx.figure("state_dict_bytes", {"fp32": size32, "int8": size8, "ratio": size32 / size8})
    xb = xte[:256]
    with torch.no_grad():
        ctx.time(lambda: q(xb), lambda: fp32(xb), name="int8_vs_fp32_time",
                 compares="your int8 model vs the fp32 model")
