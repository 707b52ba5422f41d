"""Check: pad_collate pads (L_i,) and (L_i, F) sequences to the batch's longest, batch first,
with PAD, returns int64 lengths and labels, works as a DataLoader collate_fn and with
pack_padded_sequence."""

import torch
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader


def _expected(batch, pad):
    seqs = [s for s, _ in batch]
    longest = max(s.shape[0] for s in seqs)
    out = torch.full((len(seqs), longest, *seqs[0].shape[1:]), pad, dtype=seqs[0].dtype)
    for i, s in enumerate(seqs):
        out[i, : s.shape[0]] = s
    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.long)
    labels = torch.tensor([y for _, y in batch], dtype=torch.long)
    return out, lengths, labels


def _sample(ctx, length, features):
    if features is None:
        seq = ctx.randint(1, 1000, (length,))  # token ids, never PAD
    else:
        seq = ctx.randn(length, features) + 5.0  # features, far from PAD
    return seq, int(ctx.randint(0, 5, (1,)))


def _compare(ctx, mine, batch, pad, what):
    exp_padded, exp_lengths, exp_labels = _expected(batch, pad)
    got = mine.pad_collate(batch)
    ctx.expect(isinstance(got, (tuple, list)) and len(got) == 3,
               f"{what}: pad_collate returned {type(got).__name__}, expected a tuple (padded, lengths, labels)")
    padded, lengths, labels = got
    ctx.expect(isinstance(padded, torch.Tensor), f"{what}: padded is a {type(padded).__name__}, expected a tensor")
    shape, want = tuple(padded.shape), tuple(exp_padded.shape)
    if shape != want and shape[:2] == want[:2][::-1]:
        ctx.fail(f"{what}: padded has shape {shape}, expected (batch, longest, ...) = {want}: "
                 f"put the batch dimension first (batch_first=True)")
    ctx.expect(shape == want, f"{what}: padded has shape {shape}, expected {want} "
                              f"(batch, longest length in this batch, ...)")
    ctx.expect(padded.dtype == exp_padded.dtype,
               f"{what}: padded has dtype {padded.dtype}, expected the sequences' dtype {exp_padded.dtype}")
    ctx.expect(isinstance(lengths, torch.Tensor), f"{what}: lengths is a {type(lengths).__name__}, expected a tensor")
    ctx.expect_equal(f"{what}: lengths (the lengths before padding)", lengths, exp_lengths)
    ctx.expect(isinstance(labels, torch.Tensor), f"{what}: labels is a {type(labels).__name__}, expected a tensor")
    ctx.expect_equal(f"{what}: labels", labels, exp_labels)
    mask = torch.arange(want[1])[None, :] >= exp_lengths[:, None]
    ctx.expect_equal(f"{what}: the padded positions (they must hold PAD={pad})",
                     padded[mask], exp_padded[mask])
    ctx.expect_equal(f"{what}: padded (the real positions)", padded, exp_padded)
    return got


def check(ctx):
    mine = ctx.learner
    pad = mine.PAD
    ctx.expect(pad == ctx.reference.PAD, f"PAD was changed to {pad!r}; keep PAD = 0")
    for trial in ctx.trials(6):
        size = [1, 4, 9, 5, 3, 7][trial]
        features = None if trial % 2 == 0 else int(ctx.choice([1, 3, 8]))
        lengths = [int(ctx.randint(1, 31, (1,))) for _ in range(size)]
        if trial == 3:
            lengths[0] = 1  # a length-1 sequence first and a long one last
            lengths[-1] = 30
        batch = [_sample(ctx, L, features) for L in lengths]
        kind = "token ids" if features is None else f"{features} features"
        _compare(ctx, mine, batch, pad, f"trial {trial + 1} ({size} sequences of {kind}, lengths {lengths})")

    ctx.phase("running pad_collate in a DataLoader")
    data = [_sample(ctx, int(ctx.randint(1, 20, (1,))), None) for _ in range(11)]
    loader = DataLoader(data, batch_size=4, shuffle=False, collate_fn=mine.pad_collate)
    for b, got in enumerate(loader):
        chunk = data[4 * b: 4 * b + 4]
        exp = _expected(chunk, pad)
        ctx.expect_equal(f"DataLoader batch {b + 1} of 3 (batch_size=4 over 11 samples): padded", got[0], exp[0])
        ctx.expect_equal(f"DataLoader batch {b + 1} of 3: lengths", got[1], exp[1])

    ctx.phase("packing with pack_padded_sequence")
    batch = [_sample(ctx, int(ctx.randint(1, 15, (1,))), 4) for _ in range(5)]
    padded, lengths, _ = mine.pad_collate(batch)
    packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    ctx.expect(int(packed.batch_sizes.sum()) == sum(s.shape[0] for s, _ in batch),
               "pack_padded_sequence with your lengths does not keep exactly the real positions")
