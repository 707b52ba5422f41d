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


def _first_line(exc):
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def _shares_memory(a, b):
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or "meta" in (a.device.type, b.device.type):
        return False
    try:
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001
        return False


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
    try:
        got = mine.pad_collate(batch)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001  (the learner reads why)
        ctx.fail(ctx.t("{what}: pad_collate failed: {error}. Pad with torch operations (pad_sequence), which "
                       "keep every dtype and device", what=what, error=_first_line(exc)))
    ctx.expect(all(torch.equal(s, o) for (s, _), o in zip(batch, originals)),
               ctx.t("{what}: pad_collate changed the sequences it was given: build the padded batch as a "
                     "new tensor", what=what))
    ctx.expect(isinstance(got, (tuple, list)) and len(got) == 3,
               ctx.t("{what}: pad_collate returned {type}, expected a tuple (padded, lengths, labels)",
                     what=what, type=type(got).__name__))
    padded, lengths, labels = got
    ctx.expect(isinstance(padded, torch.Tensor),
               ctx.t("{what}: padded is a {type}, expected a tensor", what=what, type=type(padded).__name__))
    ctx.expect(not any(_shares_memory(padded, sq) for sq, _ in batch),
               ctx.t("{what}: padded shares its memory with one of the sequences it was given (a view such as "
                     "seqs[0].unsqueeze(0)): an in-place edit of the batch would write into the dataset's sample. "
                     "Return a new tensor", what=what))
    shape, want = tuple(padded.shape), tuple(exp_padded.shape)
    if shape != want and shape[:2] == want[:2][::-1]:
        ctx.fail(ctx.t("{what}: padded has shape {shape}, expected (batch, longest, ...) = {want}: put the batch "
                       "dimension first (batch_first=True)", what=what, shape=shape, want=want))
    if shape != want and len(shape) == len(want) and shape[0] == want[0] and shape[2:] == want[2:]:
        ctx.fail(ctx.t("{what}: padded has shape {shape}, but the longest sequence in this batch has {steps} "
                       "steps: pad to the longest sequence of each batch, not to a fixed length",
                       what=what, shape=shape, steps=want[1]))
    ctx.expect(shape == want, ctx.t("{what}: padded has shape {shape}, expected {want} (batch, longest length "
                                    "in this batch, ...)", what=what, shape=shape, want=want))
    ctx.expect(padded.dtype == exp_padded.dtype,
               ctx.t("{what}: padded has dtype {dtype}, expected the sequences' dtype {want}",
                     what=what, dtype=padded.dtype, want=exp_padded.dtype))
    ctx.expect(isinstance(lengths, torch.Tensor),
               ctx.t("{what}: lengths is a {type}, expected an int64 tensor (a model moves it with "
                     ".to(device) and indexes with it)", what=what, type=type(lengths).__name__))
    ctx.expect(isinstance(labels, torch.Tensor),
               ctx.t("{what}: labels is a {type}, expected a tensor", what=what, type=type(labels).__name__))
    if lengths.shape == exp_lengths.shape and not torch.equal(lengths.long(), exp_lengths):
        nonpad = (exp_padded != pad).reshape(len(batch), want[1], -1).any(-1).sum(1)
        ctx.expect(not torch.equal(lengths.long(), nonpad),
                   ctx.t("{what}: lengths {got} count the values that differ from PAD, but PAD={pad} also occurs "
                         "inside the data (the true lengths are {want}): take each length from the sequence's "
                         "shape, before padding", what=what, got=lengths.tolist(), pad=pad,
                         want=exp_lengths.tolist()))
    if not torch.equal(labels, exp_labels) and sorted(labels.tolist()) == sorted(exp_labels.tolist()) \
            and sorted(lengths.tolist()) == sorted(exp_lengths.tolist()):
        ctx.fail(ctx.t("{what}: the samples come out in a different order from the one they arrived in (lengths "
                       "{got}, arrived as {want}): keep the batch order; pack_padded_sequence(..., "
                       "enforce_sorted=False) handles unsorted batches",
                       what=what, got=lengths.tolist(), want=exp_lengths.tolist()))
    ctx.expect_equal(f"{what}: lengths (the lengths before padding)", lengths, exp_lengths)
    ctx.expect_equal(f"{what}: labels", labels, exp_labels)
    if shape == want and torch.equal(padded, _expected(batch, pad, left=True)[0]) \
            and not torch.equal(padded, exp_padded):
        ctx.fail(ctx.t("{what}: the PAD values come before each sequence (left padding): put them after it, so "
                       "that step t of every row is the sequence's step t", what=what))
    mask = torch.arange(want[1])[None, :] >= exp_lengths[:, None]
    ctx.expect_equal(f"{what}: the padded positions (they must hold PAD={pad})",
                     padded[mask], exp_padded[mask])
    ctx.expect_equal(f"{what}: padded (the real positions)", padded, exp_padded)
    return got


# (batch size, features or None for tokens, dtype) per trial
_TRIALS = [(1, None, torch.long), (4, 3, torch.float32), (9, None, torch.long),
           (5, 1, torch.float32), (3, None, torch.int32), (7, 8, torch.float64), (6, 5, torch.bfloat16),
           (1, 4, torch.float32)]


def check(ctx):
    mine = ctx.learner
    pad = mine.PAD
    ctx.expect(pad == ctx.reference.PAD, ctx.t("PAD was changed to {pad!r}; keep PAD = 0", pad=pad))
    results = []
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
        dname = str(dtype).replace("torch.", "")
        if features is None:
            what = ctx.t("trial {i} ({size} sequences of token ids, {dtype}, lengths {lengths})",
                         i=trial + 1, size=size, dtype=dname, lengths=lengths)
        else:
            what = ctx.t("trial {i} ({size} sequences of {features} features, {dtype}, lengths {lengths})",
                         i=trial + 1, size=size, features=features, dtype=dname, lengths=lengths)
        got = _compare(ctx, mine, batch, pad, what)
        results.append((what, got[0], got[0].clone()))

    # Each call returns its own padded tensor: later calls must not have written into earlier ones
    # (a buffer kept between calls and handed out as views). A short batch of each kind again
    # (it fits in any buffer the first one left), then every earlier result once more.
    for trial in (0, 1):
        size, features, dtype = _TRIALS[trial]
        _compare(ctx, mine, [_sample(ctx, 2, features, dtype) for _ in range(2)], pad,
                 ctx.t("a second batch like trial {i} (2 sequences of length 2)", i=trial + 1))
    for what, padded, was in results:
        ctx.expect(torch.equal(padded, was),
                   ctx.t("{what}: the padded tensor pad_collate returned was overwritten by later calls: it is "
                         "shared between calls (a reused buffer). Allocate a new tensor in every call", what=what))

    # Sequences on another device (meta: no data, a stand-in for a GPU that every machine has):
    # padded stays with the data, lengths stay an int64 tensor on the CPU, which
    # pack_padded_sequence requires whatever the data's device.
    lengths = [int(ctx.randint(1, 31, (1,))) for _ in range(3)]
    batch = [(torch.empty(n, 4, device="meta"), k) for k, n in enumerate(lengths)]
    what = ctx.t("3 sequences of 4 features on another device (meta), lengths {lengths}", lengths=lengths)
    try:
        padded, got_lengths, _labels = mine.pad_collate(batch)
    except Exception as exc:  # noqa: BLE001
        ctx.fail(ctx.t("{what}: pad_collate failed: {error}. Pad with torch operations (pad_sequence), which "
                       "keep every dtype and device", what=what, error=_first_line(exc)))
    ctx.expect(isinstance(got_lengths, torch.Tensor) and got_lengths.device.type == "cpu",
               ctx.t("{what}: lengths are on {device}: pack_padded_sequence requires int64 lengths on the CPU, "
                     "whatever the data's device. Build them from the shapes with torch.tensor(..., "
                     "dtype=torch.long) and no device", what=what,
                     device=getattr(got_lengths, "device", type(got_lengths).__name__)))
    ctx.expect_equal(f"{what}: lengths", got_lengths, torch.tensor(lengths))
    ctx.expect_equal(f"{what}: padded's shape, dtype and device",
                     (tuple(padded.shape), str(padded.dtype), padded.device.type),
                     ((3, max(lengths), 4), "torch.float32", "meta"))

    ctx.phase(ctx.t("running pad_collate in a DataLoader"))
    data = [_sample(ctx, int(ctx.randint(1, 20, (1,))), None, torch.long) for _ in range(11)]
    loader = DataLoader(data, batch_size=4, shuffle=False, collate_fn=mine.pad_collate)
    batches = list(loader)
    for b, got in enumerate(batches):  # all batches first: each must still be its own
        chunk = data[4 * b: 4 * b + 4]
        exp = _expected(chunk, pad)
        ctx.expect_equal(f"DataLoader batch {b + 1} of 3 (batch_size=4 over 11 samples): padded", got[0], exp[0])
        ctx.expect_equal(f"DataLoader batch {b + 1} of 3: lengths", got[1], exp[1])

    # What padding to each batch's longest costs, in positions: the PAD positions in your three
    # batches against padding every sample to the dataset's longest (a fixed length).
    real = sum(int(seq.shape[0]) for seq, _ in data)
    padded_positions = sum(int(got[0].numel()) for got in batches)
    longest = max(int(seq.shape[0]) for seq, _ in data)
    ctx.figure("pad_positions", padded_positions - real,
               label=ctx.t("PAD positions in your 3 DataLoader batches ({real} real tokens)", real=real))
    ctx.figure("fixed_length_pad_positions", len(data) * longest - real,
               label=ctx.t("PAD positions if every sample were padded to the dataset's longest ({longest})",
                           longest=longest))

    ctx.phase(ctx.t("packing with pack_padded_sequence"))
    batch = [_sample(ctx, int(ctx.randint(1, 15, (1,))), 4, torch.float32) for _ in range(5)]
    padded, lengths, _ = mine.pad_collate(batch)
    packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    ctx.expect(int(packed.batch_sizes.sum()) == sum(s.shape[0] for s, _ in batch),
               ctx.t("pack_padded_sequence with your lengths does not keep exactly the real positions"))
