"""WRONG: pads through NumPy arrays, which has no bfloat16 and cannot take tensors that require grad or live on a GPU, so such batches crash instead of coming back "in the sequences' own dtype"; it only works for the dtypes NumPy shares with torch."""

import numpy as np
import torch

PAD = 0  # the value written into padded positions


def pad_collate(batch: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """batch: [(sequence, label), ...], sequence of shape (L_i,) or (L_i, F)."""
    arrays = [s.numpy() for s, _ in batch]
    lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    out = np.full((len(arrays), int(lengths.max()), *arrays[0].shape[1:]), PAD, dtype=arrays[0].dtype)
    for i, a in enumerate(arrays):
        out[i, : a.shape[0]] = a
    labels = np.array([y for _, y in batch], dtype=np.int64)
    return torch.from_numpy(out), torch.from_numpy(lengths), torch.from_numpy(labels)
