"""Shared by this chapter's checkers: torchao's import notices kept quiet, a synthetic
classification task drawn from the run's seed, fp32 training, accuracy and the size of a model
whose weights may be torchao quantized tensors."""

import logging
import warnings


def quiet_torchao():
    # torchao's import logs that its CUDA-only kernels (_C_mxfp8, _C_cutlass_90a) failed to load,
    # and torch logs a notice about an Enum that torchao registers: both are expected on a CPU
    # machine and say nothing about your code.
    for name in ("torchao", "torch.utils._pytree"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message=r".*torch\.ao\.quantization is deprecated")


quiet_torchao()

import torch  # noqa: E402
from torch import nn  # noqa: E402


def make_task(g, d=32, k=10, n_train=4000, n_test=2000, feature_scales=None):
    """Gaussian classes pushed through a fixed random non-linear map (fp32 MLP: ~92%).
    `feature_scales` multiplies each input feature (unnormalised features make 2-bit weights hard)."""
    centers = torch.randn(k, d, generator=g) * 0.8
    mix = torch.randn(d, d, generator=g) / d**0.5

    def draw(n):
        y = torch.randint(0, k, (n,), generator=g)
        x = centers[y] + torch.randn(n, d, generator=g)
        x = torch.tanh(x @ mix) * 3 + 0.5 * x
        return (x * feature_scales if feature_scales is not None else x), y

    return draw(n_train), draw(n_test)


def train_fp32(model, x, y, g, epochs=3, lr=1e-3, batch=128):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=g)
        for i in range(0, len(x), batch):
            idx = perm[i : i + batch]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def tensor_bytes(t):
    """Bytes a parameter really stores: a torchao quantized tensor counts its int8 data, scales and
    zero points (its numel() and element_size() describe the float tensor it stands for)."""
    inner, _ = t.__tensor_flatten__() if hasattr(t, "__tensor_flatten__") else ([], None)
    if inner:
        return sum(tensor_bytes(getattr(t, n)) for n in inner if getattr(t, n) is not None)
    return t.numel() * t.element_size()


def model_bytes(model):
    return sum(tensor_bytes(p) for p in model.parameters())


def is_quantized(w):
    return hasattr(w, "qdata") and hasattr(w, "scale")


def snapshot(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}, model.training


def untouched(model, snap):
    state, training = snap
    now = model.state_dict()
    same = (
        set(now) == set(state)
        and all(type(now[k]) is torch.Tensor or isinstance(now[k], nn.Parameter) for k in now)
        and all(torch.equal(now[k], state[k]) for k in now)
    )
    return same and model.training == training
