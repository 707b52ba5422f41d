"""WRONG: puts `lengths` on the sequences' device, so a batch of GPU tensors gets CUDA lengths, which pack_padded_sequence rejects (the guide: "Lengths must be an int64 tensor on the CPU"); on CPU data it looks right."""

import torch
from torch.nn.utils.rnn import pad_sequence

PAD = 0  # the value written into padded positions


def pad_collate(batch: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """batch: [(sequence, label), ...], sequence of shape (L_i,) or (L_i, F)."""
    seqs, labels = zip(*batch)
    device = seqs[0].device  # keep the whole batch together on the data's device
    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.long, device=device)
    padded = pad_sequence(list(seqs), batch_first=True, padding_value=PAD)
    return padded, lengths, torch.tensor(labels, dtype=torch.long, device=device)
