"""WRONG: fills one module-level buffer that is reused by every call and returns views of it, so the padded tensor of an earlier batch is overwritten by the next batch; each call must return its own padded tensor."""

import torch

PAD = 0  # the value written into padded positions

_buffers: dict[tuple, torch.Tensor] = {}  # grown on demand, reused across batches


def _buffer(batch: int, length: int, rest: tuple, like: torch.Tensor) -> torch.Tensor:
    key = (like.dtype, like.device, rest)
    buf = _buffers.get(key)
    if buf is None or buf.shape[0] < batch or buf.shape[1] < length:
        rows = max(batch, buf.shape[0] if buf is not None else 0)
        cols = max(length, buf.shape[1] if buf is not None else 0)
        buf = like.new_empty((rows, cols, *rest))
        _buffers[key] = buf
    view = buf[:batch, :length]
    view.fill_(PAD)
    return view


def pad_collate(batch: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """batch: [(sequence, label), ...], sequence of shape (L_i,) or (L_i, F)."""
    seqs = [s for s, _ in batch]
    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.long)
    padded = _buffer(len(seqs), int(lengths.max()), tuple(seqs[0].shape[1:]), seqs[0])
    for i, s in enumerate(seqs):
        padded[i, : s.shape[0]] = s
    return padded, lengths, torch.tensor([y for _, y in batch], dtype=torch.long)
