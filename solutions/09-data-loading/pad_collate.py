"""Reference solution: a collate_fn that pads variable-length sequences and keeps their lengths."""

import torch
from torch.nn.utils.rnn import pad_sequence

PAD = 0  # the value written into padded positions


def pad_collate(batch: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    seqs, labels = zip(*batch)
    # From the shapes: PAD can also be a real value inside a sequence.
    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.long)  # key
    padded = pad_sequence(list(seqs), batch_first=True, padding_value=PAD)  # key
    return padded, lengths, torch.tensor(labels, dtype=torch.long)
