"""RIGHT: allocates the (batch, L_max, ...) output with new_full from the first sequence (dtype and device kept) and copies each sequence into its row by slicing, instead of pad_sequence."""

import torch

PAD = 0  # the value written into padded positions


def pad_collate(batch: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """batch: [(sequence, label), ...], sequence of shape (L_i,) or (L_i, F)."""
    seqs = [sample[0] for sample in batch]
    lengths = torch.as_tensor([s.size(0) for s in seqs], dtype=torch.int64)
    first = seqs[0]
    padded = first.new_full((len(seqs), int(lengths.max()), *first.shape[1:]), PAD)
    for row, s in enumerate(seqs):
        padded[row, : s.size(0)] = s
    labels = torch.as_tensor([int(sample[1]) for sample in batch], dtype=torch.int64)
    return padded, lengths, labels
