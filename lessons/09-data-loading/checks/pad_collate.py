"""Check: pad_collate pads (L_i,) and (L_i, F) sequences (int64/int32 tokens, float32/float64
features, non-contiguous ones, PAD values inside the data) to the batch's longest, batch first,
with PAD after each sequence, keeps the batch order, returns int64 lengths (from the shapes) and
labels, works as a DataLoader collate_fn and with pack_padded_sequence."""

import torch
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader


def _expected(batch, pad, left=False):
    seqs = [s for s, _ in batch]
    longest = max(s.shape[0] for s in seqs)
    out = torch.full((len(seqs), longest, *seqs[0].shape[1:]), pad, dtype=seqs[0].dtype)
    for i, s in enumerate(seqs):
        if left:
            out[i, longest - s.shape[0]:] = s
        else:
            out[i, : s.shape[0]] = s
    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.long)
    labels = torch.tensor([y for _, y in batch], dtype=torch.long)
    return out, lengths, labels


def _sample(ctx, length, features, dtype, noncontiguous=False):
    if features is None:
        # token ids from a small vocabulary: PAD (0) is also a real token inside the data
        seq = ctx.randint(0, 6, (length,)).to(dtype)
    elif noncontiguous:
        seq = ctx.randn(features, length).to(dtype).t()  # a (length, features) view, not contiguous
    else:
        seq = ctx.randn(length, features).to(dtype)
    return seq, int(ctx.randint(0, 5, (1,)))


def _compare(ctx, mine, batch, pad, what):
    exp_padded, exp_lengths, exp_labels = _expected(batch, pad)
    originals = [s.clone() for s, _ in batch]
    got = mine.pad_collate(batch)
    ctx.expect(all(torch.equal(s, o) for (s, _), o in zip(batch, originals)),
               f"{what}: pad_collate changed the sequences it was given: build the padded batch as a "
               f"new tensor")
    ctx.expect(isinstance(got, (tuple, list)) and len(got) == 3,
               f"{what}: pad_collate returned {type(got).__name__}, expected a tuple (padded, lengths, labels)")
    padded, lengths, labels = got
    ctx.expect(isinstance(padded, torch.Tensor), f"{what}: padded is a {type(padded).__name__}, expected a tensor")
    shape, want = tuple(padded.shape), tuple(exp_padded.shape)
    if shape != want and shape[:2] == want[:2][::-1]:
        ctx.fail(f"{what}: padded has shape {shape}, expected (batch, longest, ...) = {want}: "
                 f"put the batch dimension first (batch_first=True)")
    if shape != want and len(shape) == len(want) and shape[0] == want[0] and shape[2:] == want[2:]:
        ctx.fail(f"{what}: padded has shape {shape}, but the longest sequence in this batch has "
                 f"{want[1]} steps: pad to the longest sequence of each batch, not to a fixed length")
    ctx.expect(shape == want, f"{what}: padded has shape {shape}, expected {want} "
                              f"(batch, longest length in this batch, ...)")
    ctx.expect(padded.dtype == exp_padded.dtype,
               f"{what}: padded has dtype {padded.dtype}, expected the sequences' dtype {exp_padded.dtype}")
    ctx.expect(isinstance(lengths, torch.Tensor),
               f"{what}: lengths is a {type(lengths).__name__}, expected an int64 tensor "
               f"(a model moves it with .to(device) and indexes with it)")
    ctx.expect(isinstance(labels, torch.Tensor), f"{what}: labels is a {type(labels).__name__}, expected a tensor")
    if lengths.shape == exp_lengths.shape and not torch.equal(lengths.long(), exp_lengths):
        nonpad = (exp_padded != pad).reshape(len(batch), want[1], -1).any(-1).sum(1)
        ctx.expect(not torch.equal(lengths.long(), nonpad),
                   f"{what}: lengths {lengths.tolist()} count the values that differ from PAD, but PAD={pad} "
                   f"also occurs inside the data (the true lengths are {exp_lengths.tolist()}): take "
                   f"each length from the sequence's shape, before padding")
    if not torch.equal(labels, exp_labels) and sorted(labels.tolist()) == sorted(exp_labels.tolist()) \
            and sorted(lengths.tolist()) == sorted(exp_lengths.tolist()):
        ctx.fail(f"{what}: the samples come out in a different order from the one they arrived in "
                 f"(lengths {lengths.tolist()}, arrived as {exp_lengths.tolist()}): keep the batch "
                 f"order; pack_padded_sequence(..., enforce_sorted=False) handles unsorted batches")
    ctx.expect_equal(f"{what}: lengths (the lengths before padding)", lengths, exp_lengths)
    ctx.expect_equal(f"{what}: labels", labels, exp_labels)
    if shape == want and torch.equal(padded, _expected(batch, pad, left=True)[0]) \
            and not torch.equal(padded, exp_padded):
        ctx.fail(f"{what}: the PAD values come before each sequence (left padding): put them after it, "
                 f"so that step t of every row is the sequence's step t")
    mask = torch.arange(want[1])[None, :] >= exp_lengths[:, None]
    ctx.expect_equal(f"{what}: the padded positions (they must hold PAD={pad})",
                     padded[mask], exp_padded[mask])
    ctx.expect_equal(f"{what}: padded (the real positions)", padded, exp_padded)
    return got


# (batch size, features or None for tokens, dtype) per trial
_TRIALS = [(1, None, torch.long), (4, 3, torch.float32), (9, None, torch.long),
           (5, 1, torch.float32), (3, None, torch.int32), (7, 8, torch.float64)]


def check(ctx):
    mine = ctx.learner
    pad = mine.PAD
    ctx.expect(pad == ctx.reference.PAD, f"PAD was changed to {pad!r}; keep PAD = 0")
    for trial in ctx.trials(len(_TRIALS)):
        size, features, dtype = _TRIALS[trial]
        lengths = [int(ctx.randint(1, 31, (1,))) for _ in range(size)]
        if trial == 3:
            lengths[0] = 1  # a length-1 sequence first and a long one last
            lengths[-1] = 30
        if trial == 4:
            lengths = [lengths[0]] * size  # all the same length: nothing to pad
        batch = [_sample(ctx, L, features, dtype, noncontiguous=trial == 5) for L in lengths]
        if features is None:
            batch[0][0][-1] = 0  # the longest-looking trap: a sequence that ends with the PAD token
            if size > 2:
                batch[1][0].zero_()  # and one made of PAD tokens only
        else:
            batch[0][0][-1] = 0.0  # a last feature vector of exact zeros
        kind = "token ids" if features is None else f"{features} features"
        _compare(ctx, mine, batch, pad, f"trial {trial + 1} ({size} sequences of {kind}, "
                                        f"{str(dtype).replace('torch.', '')}, lengths {lengths})")

    ctx.phase("running pad_collate in a DataLoader")
    data = [_sample(ctx, int(ctx.randint(1, 20, (1,))), None, torch.long) for _ in range(11)]
    loader = DataLoader(data, batch_size=4, shuffle=False, collate_fn=mine.pad_collate)
    for b, got in enumerate(loader):
        chunk = data[4 * b: 4 * b + 4]
        exp = _expected(chunk, pad)
        ctx.expect_equal(f"DataLoader batch {b + 1} of 3 (batch_size=4 over 11 samples): padded", got[0], exp[0])
        ctx.expect_equal(f"DataLoader batch {b + 1} of 3: lengths", got[1], exp[1])

    ctx.phase("packing with pack_padded_sequence")
    batch = [_sample(ctx, int(ctx.randint(1, 15, (1,))), 4, torch.float32) for _ in range(5)]
    padded, lengths, _ = mine.pad_collate(batch)
    packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    ctx.expect(int(packed.batch_sizes.sum()) == sum(s.shape[0] for s, _ in batch),
               "pack_padded_sequence with your lengths does not keep exactly the real positions")
