"""RIGHT: pads every sequence on its own with torch.nn.functional.pad (zero rows appended at the end of dim 0) and stacks them, instead of pad_sequence."""

import torch
import torch.nn.functional as F

PAD = 0  # the value written into padded positions


def pad_collate(batch: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """batch: [(sequence, label), ...], sequence of shape (L_i,) or (L_i, F)."""
    seqs, labels = zip(*batch)
    longest = max(s.shape[0] for s in seqs)
    rows = []
    for s in seqs:
        # F.pad's tuple runs from the last dimension backwards: (0, 0) for each feature dim,
        # then (0, missing) for the sequence dim.
        spec = (0, 0) * (s.dim() - 1) + (0, longest - s.shape[0])
        rows.append(F.pad(s, spec, mode="constant", value=PAD))
    padded = torch.stack(rows)
    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.long)
    return padded, lengths, torch.tensor(labels, dtype=torch.long)
