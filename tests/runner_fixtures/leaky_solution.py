import torch.nn.functional as F


def leaky(x):
    return F.leaky_relu(x, 0.1)
