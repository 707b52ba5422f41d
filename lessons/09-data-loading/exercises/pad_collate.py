"""Exercise: a collate_fn that pads variable-length sequences and keeps their lengths."""

import torch
from torch.nn.utils.rnn import pad_sequence  # noqa: F401  (you will want it)

PAD = 0  # the value written into padded positions


def pad_collate(batch: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """batch: [(sequence, label), ...], sequence of shape (L_i,) or (L_i, F).

    Returns (padded, lengths, labels): padded of shape (batch, L_max, ...) in the sequences'
    dtype with PAD after each sequence, lengths and labels as int64 tensors of shape (batch,).
    """
    # TODO: separate the sequences from the labels, keeping the order the samples arrived in.
    # TODO: record each sequence's length. Watch out: PAD (0) can also be a real value inside a
    # sequence, so the padded tensor cannot tell you where a sequence ends.
    # TODO: pad to the longest sequence of THIS batch, batch dimension first, PAD after each
    # sequence, in the sequences' own dtype.
    raise NotImplementedError("TODO: pad the batch")
