"""Check: BalancedClassSampler draws classes in equal proportion from imbalanced labels (class ids
not 0..k-1, classes of one item), draws uniformly within each class (every item of a small class
comes up), has the right length, is reproducible for a seed (independent of the global RNGs),
differs by seed and by epoch, and leaves the labels it is given alone. Reports the time to build
a sampler over 200,000 labels."""

import math
import random
from collections import Counter

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

from _common import reseeded_global_rngs


def _disturb_global_rngs():
    """What the rest of a training script does between two samplers: draw from the global RNGs."""
    torch.rand(7)
    np.random.rand(3)
    random.random()


def _indices(ctx, sampler, what, desc):
    out = []
    try:
        for i in sampler:
            if isinstance(i, torch.Tensor) and i.numel() == 1 and not i.is_floating_point():
                i = int(i)
            if isinstance(i, np.integer):
                i = int(i)
            if not isinstance(i, int) or isinstance(i, bool):
                ctx.fail(ctx.t("the sampler yielded {value!r} ({type}): a sampler yields dataset indices as "
                               "Python ints", value=i, type=type(i).__name__))
            out.append(i)
    except Exception as exc:  # a learner's error while iterating, said in one line with the data
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        ctx.fail(ctx.t("iterating over the sampler raised {error} ({text}) for {desc}: are the classes taken "
                       "from the labels themselves (any integers, a class may have one item)?",
                       error=type(exc).__name__, text=text, desc=desc))
    return out


def _make_labels(ctx, trial):
    k = [2, 3, 4][trial % 3]
    if trial == 0:
        ids = list(range(k))
    else:  # class ids that are not 0..k-1
        ids = sorted(int(v) for v in torch.randperm(20, generator=ctx.generator)[:k] + 1)
    n = int(ctx.randint(600, 3001, (1,)))
    # heavily imbalanced: one large class, the others 3 to 40 items (one item in the last trial)
    small = [int(ctx.randint(3, 41, (1,))) for _ in range(k - 1)]
    if trial == 2:
        small[-1] = 1
    sizes = [n - sum(small)] + small
    labels = torch.cat([torch.full((m,), c, dtype=torch.long) for c, m in zip(ids, sizes)])
    labels = labels[torch.randperm(n, generator=ctx.generator)]
    return labels, dict(zip(ids, sizes))


def _within_class(ctx, first, labels, sizes, num_samples, desc):
    """Within a class every item is equally likely: a small class (15+ draws per item) shows every
    item, and each class's first half of items gets about its share of the class's draws."""
    label_of = labels.tolist()
    per_item = Counter(first)
    for c in sorted(sizes):
        items = [i for i, lab in enumerate(label_of) if lab == c]
        draws = sum(per_item[i] for i in items)
        if draws >= 15 * len(items):
            never = [i for i in items if per_item[i] == 0]
            ctx.expect(not never,
                       ctx.t("{desc}: class {c} has {n} items and was drawn {draws} times, but item {item} (and "
                             "{more} more) never came up: every item of a class must be possible (check the "
                             "range of the random index within the class)",
                             desc=desc, c=c, n=len(items), draws=draws, item=never[0] if never else 0,
                             more=max(len(never) - 1, 0)))
        if len(items) >= 2 and draws >= 300:
            half = items[: (len(items) + 1) // 2]
            share = sum(per_item[i] for i in half) / draws
            want = len(half) / len(items)
            ctx.expect(abs(share - want) <= 0.1,
                       ctx.t("{desc}: {share:.0%} of class {c}'s draws went to the first {half} of its {n} "
                             "items, expected about {want:.0%}: pick uniformly among all the items of the class",
                             desc=desc, share=share, c=c, half=len(half), n=len(items), want=want))
        # Decided by the sizes alone, so both runs observe the same classes: a class expecting 20 or
        # more draws per item shows all its items, whatever the order (with its share within 20%,
        # it got 16+ draws per item, so the fact above has already named an item that never came).
        if num_samples / len(sizes) >= 20 * len(items):
            came = sorted(i for i in per_item if label_of[i] == c)
            ctx.expect_equal(ctx.t("{desc}: the items of class {c} that came up", desc=desc, c=c), came, came)


def check(ctx):
    Sampler = ctx.learner.BalancedClassSampler
    for trial in ctx.trials(3):
        labels, sizes = _make_labels(ctx, trial)
        n, k = len(labels), len(sizes)
        num_samples = ctx.choice([3000, 4001, 5000])
        seed = int(ctx.randint(0, 10_000, (1,)))
        given = labels.tolist() if trial == 0 else labels.clone()
        desc = ctx.t("{n} labels, classes {classes} with {sizes} items, num_samples={num_samples}",
                     n=n, classes=sorted(sizes), sizes=[sizes[c] for c in sorted(sizes)], num_samples=num_samples)

        s1 = Sampler(given, num_samples, seed=seed)
        same = given == labels.tolist() if isinstance(given, list) else torch.equal(given, labels)
        ctx.expect(same, ctx.t("building the sampler changed the labels it was given (sorted or overwrote "
                               "them): work on a copy; the dataset's labels belong to the caller"))
        after = given.tolist() if isinstance(given, torch.Tensor) else list(given)
        ctx.expect_equal(ctx.t("the labels after building the sampler for {desc}", desc=desc), after, after)
        ctx.expect(len(s1) == num_samples,
                   ctx.t("len(sampler) is {got} for {desc}: __len__ must say how many indices one pass yields, "
                         "which is num_samples={num_samples}", got=len(s1), desc=desc, num_samples=num_samples))
        ctx.expect_equal(ctx.t("len(sampler) for {desc}", desc=desc), len(s1), len(s1))
        _disturb_global_rngs()
        s2 = Sampler(given, num_samples, seed=seed)
        _disturb_global_rngs()
        first = _indices(ctx, s1, "the sampler", desc)
        ctx.expect(len(first) == num_samples,
                   ctx.t("one pass yielded {got} indices for {desc}, expected num_samples={num_samples}",
                         got=len(first), desc=desc, num_samples=num_samples))
        bad = [i for i in first if not 0 <= i < n]
        ctx.expect(not bad, ctx.t("the sampler yielded index {index}, outside the dataset (valid indices are "
                                  "0..{last})", index=bad[0] if bad else 0, last=n - 1))
        ctx.expect_equal(ctx.t("the number of indices one pass yielded for {desc}", desc=desc), len(first), len(first))

        label_of = labels.tolist()
        drawn = Counter(label_of[i] for i in first)
        for c in sorted(sizes):
            share = drawn.get(c, 0) / num_samples
            ctx.expect(abs(share - 1 / k) <= 0.2 / k,
                       ctx.t("{desc}: class {c} ({size} of {n} items) was drawn {share:.1%} of the time, expected "
                             "about {want:.1%} (each of the {k} classes equally often)",
                             desc=desc, c=c, size=sizes[c], n=n, share=share, want=1 / k, k=k))
        classes = sorted(drawn)
        ctx.expect_equal(ctx.t("{desc}: the classes one pass drew", desc=desc), classes, classes)
        _within_class(ctx, first, labels, sizes, num_samples, desc)
        # Each position's class is its own draw: consecutive indices share a class about 1/k of the
        # time (one class after another, in blocks, is ~100%: every DataLoader batch a single class).
        # 3000+ draws: the reference's share is within ~3 points of 1/k.
        repeats = sum(label_of[a] == label_of[b] for a, b in zip(first, first[1:])) / (len(first) - 1)
        ctx.expect(repeats <= 1 / k + 0.1,
                   ctx.t("{desc}: {share:.0%} of consecutive indices have the same class, expected about {want:.0%}: "
                         "the classes come in blocks, so a DataLoader batch holds one or two classes. Draw each "
                         "position's class at random (a class, then an index of that class)",
                         desc=desc, share=repeats, want=1 / k))

        _disturb_global_rngs()
        again = _indices(ctx, s2, "the sampler", desc)
        ctx.expect(again == first,
                   ctx.t("two samplers with the same labels and seed gave different orders (the global random "
                         "generators were used in between): draw only from the sampler's own "
                         "torch.Generator(), seeded in __init__"))
        second = _indices(ctx, s1, "the sampler", desc)
        ctx.expect(second != first,
                   ctx.t("the second pass (next epoch) repeated the first pass's order exactly: create the "
                         "generator once in __init__ so each pass continues its stream"))
        ctx.expect(second == _indices(ctx, s2, "the sampler", desc),
                   ctx.t("the second passes of two samplers with the same seed differ: the order must "
                         "depend only on the seed"))
        other = _indices(ctx, Sampler(given, num_samples, seed=seed + 1), "the sampler", desc)
        ctx.expect(other != first, ctx.t("seeds {a} and {b} gave the same order: use the seed", a=seed, b=seed + 1))
        # Every pass is a whole epoch: a sampler that hands out one stream made in __init__ has
        # nothing left for the next epoch, and an empty pass differs from the first one.
        passes = [len(again), len(second), len(other)]
        ctx.expect_equal(ctx.t("{desc}: the number of indices yielded by the same seed's sampler, by the next "
                               "epoch and by seed {b}", desc=desc, b=seed + 1), passes, passes)
        if trial == 0:  # a pass must not reseed the global generators (drawing from them is checked above)
            reseeded = reseeded_global_rngs(lambda: _indices(ctx, s1, "the sampler", desc))
            ctx.expect(not reseeded,
                       ctx.t("a pass over the sampler reseeded the global generator ({what}): that resets the "
                             "randomness of everything else in the training script on every epoch. Draw only from "
                             "the sampler's own torch.Generator(), seeded once in __init__",
                             what=", ".join(reseeded)))
            ctx.expect_equal(ctx.t("the global generators a pass over the sampler reseeded"), reseeded, reseeded)

    ctx.phase(ctx.t("running the sampler in a DataLoader"))
    labels, _ = _make_labels(ctx, 1)
    num_samples, batch = 1000, 64
    loader = DataLoader(TensorDataset(torch.arange(len(labels))), batch_size=batch,
                        sampler=Sampler(labels, num_samples, seed=1))
    ctx.expect(len(loader) == math.ceil(num_samples / batch),
               ctx.t("len(DataLoader) is {got}, expected {want} batches of {batch}",
                     got=len(loader), want=math.ceil(num_samples / batch), batch=batch))
    ctx.expect_equal(ctx.t("the number of batches, len(DataLoader)"), len(loader), len(loader))
    sizes = [len(b[0]) for b in loader]
    got = sum(sizes)
    ctx.expect(got == num_samples, ctx.t("the DataLoader produced {got} items, expected {want}",
                                         got=got, want=num_samples))
    ctx.expect_equal(ctx.t("the sizes of the DataLoader's batches"), sizes, sizes)

    big = torch.randint(0, 10, (200_000,), generator=ctx.generator)
    ctx.time(lambda: Sampler(big, 1000, seed=1),
             lambda: ctx.reference.BalancedClassSampler(big, 1000, seed=1),
             name="build_time_200k_labels", label=ctx.t("time to build a sampler over 200,000 labels"))
