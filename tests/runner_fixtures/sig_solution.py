import torch


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x)
