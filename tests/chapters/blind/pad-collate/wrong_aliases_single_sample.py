"""WRONG: for a batch of one sample it returns seqs[0].unsqueeze(0), a view of the caller's own tensor, not a new padded tensor: any in-place edit of the batch (masking, normalising) writes into the dataset's sample."""

import torch
from torch.nn.utils.rnn import pad_sequence

PAD = 0  # the value written into padded positions


def pad_collate(batch: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """batch: [(sequence, label), ...], sequence of shape (L_i,) or (L_i, F)."""
    seqs = [s for s, _ in batch]
    labels = torch.tensor([y for _, y in batch], dtype=torch.long)
    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.long)
    if len(seqs) == 1:
        padded = seqs[0].unsqueeze(0)  # nothing to pad against: just add the batch dimension
    else:
        padded = pad_sequence(seqs, batch_first=True, padding_value=PAD)
    return padded, lengths, labels
