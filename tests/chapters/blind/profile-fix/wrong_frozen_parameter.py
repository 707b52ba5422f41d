"""WRONG: keeps the whitener as a frozen nn.Parameter, which adds a parameter "w" to named_parameters() and hands it to the optimizer (weight decay and momentum code see it), against "same parameters (names and shapes)" and "the optimizer never trains it"."""

import torch
from torch import nn
from torch.nn import functional as F


class Whitened(nn.Module):
    """Given: do not edit. Whitens its input with the covariance `cov` of the training data
    (so every input direction has unit variance), then classifies with a small MLP."""

    def __init__(self, cov: torch.Tensor, hidden: int = 128, classes: int = 10):
        super().__init__()
        self.register_buffer("cov", cov.clone())
        self.net = nn.Sequential(nn.Linear(cov.shape[0], hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def whitener(self) -> torch.Tensor:
        """cov ** -1/2, the symmetric inverse square root of the covariance."""
        evals, evecs = torch.linalg.eigh(self.cov)
        return evecs @ torch.diag(evals.clamp_min(1e-5).rsqrt()) @ evecs.T

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x @ self.whitener())


def train_step(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> float:
    """Given: do not edit. One SGD step on the cross-entropy loss; returns the loss."""
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


HOT_OP = "aten::_linalg_eigh"


class FastWhitened(Whitened):
    """The same model as Whitened(cov, hidden, classes): same parameters (names and shapes),
    same outputs, same training with train_step, without the bottleneck."""

    def __init__(self, cov: torch.Tensor, hidden: int = 128, classes: int = 10):
        super().__init__(cov, hidden, classes)
        # Frozen: requires_grad=False, so the optimizer never changes it.
        self.w = nn.Parameter(self.whitener(), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x @ self.w)


if __name__ == "__main__":
    import time

    cov = torch.cov((torch.randn(1000, 160) @ torch.randn(160, 160)).T)
    x, y = torch.randn(64, 160), torch.randint(0, 10, (64,))
    for cls in (Whitened, FastWhitened):
        model = cls(cov)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        start = time.perf_counter()
        for _ in range(20):
            train_step(model, opt, x, y)
        print(f"{cls.__name__}: {(time.perf_counter() - start) / 20 * 1e3:.1f} ms per step")
