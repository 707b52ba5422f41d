"""Check: quantize_static_int8 returns a calibrated, converted int8 model (static, not dynamic) whose
accuracy on a synthetic task generated from the run's seed is within 2 points of the fp32 model.
Reports both accuracies, the state_dict sizes and int8 vs fp32 speed."""

import copy
import io
import warnings

import torch
from torch import nn
from torch.ao.quantization import DeQuantStub, QuantStub
from torch.utils.data import DataLoader, TensorDataset

MAX_DROP = 0.02


class QuantMLP(nn.Module):
    def __init__(self, d_in: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.quant = QuantStub()
        self.fc1, self.relu1 = nn.Linear(d_in, hidden), nn.ReLU()
        self.fc2, self.relu2 = nn.Linear(hidden, hidden), nn.ReLU()
        self.fc3 = nn.Linear(hidden, classes)
        self.dequant = DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.relu1(self.fc1(x))
        x = self.relu2(self.fc2(x))
        return self.dequant(self.fc3(x))


def make_task(g, d=16, k=5, n_train=3000, n_test=2000):
    """Gaussian classes pushed through a fixed random non-linear map: a fp32 MLP gets ~90-98%."""
    centers = torch.randn(k, d, generator=g) * 1.2
    mix = torch.randn(d, d, generator=g) / d ** 0.5

    def draw(n):
        y = torch.randint(0, k, (n,), generator=g)
        x = centers[y] + torch.randn(n, d, generator=g)
        return torch.tanh(x @ mix) * 3 + 0.5 * x, y

    return draw(n_train), draw(n_test)


def train_fp32(model, x, y, g, epochs=6, lr=3e-3, batch=256):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=g)
        for i in range(0, len(x), batch):
            idx = perm[i:i + batch]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def state_dict_bytes(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return len(buf.getvalue())


def quiet_quantization_warnings():
    # torch.ao.quantization's deprecation notices are expected: keep them out of the output.
    warnings.filterwarnings("ignore", message=r"torch\.ao\.quantization is deprecated")
    warnings.filterwarnings("ignore", message=r".*quantized tensor creation functions")
    warnings.filterwarnings("ignore", message=r"Please use quant_min and quant_max")


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
    quant = q.get_submodule("quant")
    ctx.expect(isinstance(quant, nnq.Quantize),
               f"`quant` is a {type(quant).__name__}, expected a converted Quantize module")
    scale, zero = float(quant.scale), int(quant.zero_point)
    ctx.expect(not (scale == 1.0 and zero == 0),
               f"the input's quantization scale is 1.0 with zero point 0, the value observers give "
               f"when they have seen no data: run the calibration batches through the prepared model "
               f"before convert")


def check(ctx):
    quiet_quantization_warnings()
    mine = ctx.learner
    torch.set_num_threads(1)  # tiny matmuls: one thread is faster and steadier on a shared CPU
    ctx.phase("training the fp32 model on a synthetic task")
    k = ctx.choice([4, 5, 6])
    (xtr, ytr), (xte, yte) = make_task(ctx.generator, k=k)
    torch.manual_seed(ctx.seed)
    model = train_fp32(QuantMLP(16, 64, k), xtr, ytr, ctx.generator)
    acc32 = accuracy(model, xte, yte)
    fp32 = copy.deepcopy(model)

    ctx.phase("your quantize_static_int8: prepare, calibrate, convert")
    calib = DataLoader(TensorDataset(xtr[:512], ytr[:512]), batch_size=128)
    q = mine.quantize_static_int8(copy.deepcopy(model), calib)
    ctx.expect(isinstance(q, nn.Module), f"quantize_static_int8 returned {type(q).__name__}, expected the "
                                         f"quantized model")
    ctx.expect(not q.training, "the quantized model is in training mode: quantize in eval mode "
                               "(model.eval() before fusing) and return it that way")
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
        ctx.time(lambda: q(xb), lambda: fp32(xb), name="int8_vs_fp32_time")
