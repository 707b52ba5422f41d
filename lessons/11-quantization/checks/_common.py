"""Shared by this chapter's checkers: the filter for torch.ao.quantization's expected notices, and
the model, synthetic task and fp32 training that static quantization and QAT are judged on."""

import warnings

import torch
from torch import nn
from torch.ao.quantization import DeQuantStub, QuantStub

MAX_DROP = 0.02  # how much accuracy int8 may lose against fp32


def quiet_quantization_warnings():
    # The deprecation notices of torch.ao.quantization are expected here: keep them out of the
    # output so they are not mistaken for a problem with your code.
    warnings.filterwarnings("ignore", message=r"torch\.ao\.quantization is deprecated")
    warnings.filterwarnings("ignore", message=r".*quantized tensor creation functions")
    warnings.filterwarnings("ignore", message=r"Please use quant_min and quant_max")


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


def trained_fp32_model(ctx):
    """A QuantMLP trained in fp32 on a task drawn from the run's seed.
    Returns (model, its test accuracy, (x_train, y_train), (x_test, y_test))."""
    torch.set_num_threads(1)  # tiny matmuls: one thread is faster and steadier on a shared CPU
    ctx.phase("training the fp32 model on a synthetic task")
    k = ctx.choice([4, 5, 6])
    (xtr, ytr), (xte, yte) = make_task(ctx.generator, k=k)
    torch.manual_seed(ctx.seed)
    model = train_fp32(QuantMLP(16, 64, k), xtr, ytr, ctx.generator)
    return model, accuracy(model, xte, yte), (xtr, ytr), (xte, yte)
