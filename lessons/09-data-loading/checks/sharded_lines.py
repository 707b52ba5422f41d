"""Check: ShardedLines yields every sample exactly once for 0-3 DataLoader workers, two epochs in
a row (persistent workers), each file read by one worker, files spread evenly; `shard` splits
lists exactly and evenly on its own and leaves the list it is given alone."""

import warnings
from collections import Counter

from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from _common import reseeded_global_rngs

_PER_FILE = 1000  # sample value = file number * _PER_FILE + line number


class _Tagged(IterableDataset):
    """Wraps the learner's dataset and tags each sample with the worker that produced it."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def __iter__(self):
        info = get_worker_info()
        wid = -1 if info is None else info.id
        for sample in self.inner:
            yield wid, sample


def _check_shard(ctx, shard):
    cases = [(10, 3), (7, 2), (11, 4), (2, 3), (5, 4), (5, 1), (9, 3), (0, 2), (1, 1), (6, 1)]
    for n_items, n_workers in cases:
        names = [f"file{i:02d}" for i in range(n_items)]
        # a tuple for some cases: shard takes any sequence
        items = tuple(names) if n_items % 2 else list(names)
        raw = [shard(items, w, n_workers) for w in range(n_workers)]
        where = ctx.t("shard() of {n} items over {workers} workers", n=n_items, workers=n_workers)
        # The share is a new list: not `items` itself (with one worker everything is the share, and
        # the caller editing its share would edit its own list), and a list even for a tuple.
        ctx.expect(not any(part is items for part in raw),
                   ctx.t("{where} returned `items` itself: return the share as a new list (list(items) with one "
                         "worker), so that editing the share leaves the caller's items alone", where=where))
        ctx.expect(all(isinstance(part, list) for part in raw),
                   ctx.t("{where} returned a {type}, expected the share as a list", where=where,
                         type=next((type(p).__name__ for p in raw if not isinstance(p, list)), "list")))
        parts = [list(part) for part in raw]
        ctx.expect(list(items) == names, ctx.t("{where} changed the list it was given: build a new list "
                                               "for the share and leave `items` as it was", where=where))
        counts = Counter(x for p in parts for x in p)
        missing = [x for x in names if counts[x] == 0]
        twice = [x for x in names if counts[x] > 1]
        strange = [x for x in counts if x not in names]
        if strange:
            ctx.fail(ctx.t("{where} returned {item!r}, which is not one of the items", where=where, item=strange[0]))
        ctx.expect(not missing, ctx.t("{where} loses {n} item(s), e.g. {some}: the items left over after "
                                      "equal shares must still go to some worker",
                                      where=where, n=len(missing), some=missing[:3]))
        if twice:
            ctx.fail(ctx.t("{where} gives {item!r} to {n} workers: each item belongs to exactly one worker",
                           where=where, item=twice[0], n=counts[twice[0]]))
        sizes = [len(p) for p in parts]
        ctx.expect(max(sizes) - min(sizes) <= 1,
                   ctx.t("{where} gives shares of sizes {sizes}: they should differ by at most one item "
                         "(rounding the share size up leaves the last workers short)", where=where, sizes=sizes))
        # Which worker gets which items is free: the items of all shares together and the sizes of
        # the shares, both sorted, are not; nor is `items` itself after the calls.
        split = [sorted(x for p in parts for x in p), sorted(sizes), list(items)]
        ctx.expect_equal(ctx.t("{where}: every item of all shares and the share sizes, sorted, and the items "
                               "afterwards", where=where), split, split)


_STALE = 900  # line j of file f holds f * _PER_FILE + _STALE + j until the dataset has been built


def _write_files(ctx, folder, n_files):
    paths, expected, contents = [], Counter(), {}
    folder.mkdir()
    for f in range(n_files):
        n_lines = int(ctx.randint(1, 26, (1,)))
        values = [f * _PER_FILE + j for j in range(n_lines)]
        path = folder / f"data_{f:02d}.txt"
        contents[str(path)] = "".join(f"{v}\n" for v in values)
        paths.append(str(path))
        expected.update(values)
    _fill(contents, stale=True)
    return paths, expected, contents


def _fill(contents, stale=False):
    """Write the files; `stale`: what they held before (other values), so that a dataset that
    reads them when it is built, not when it is iterated, yields those."""
    for path, text in contents.items():
        if stale:
            text = "".join(f"{int(v) + _STALE}\n" for v in text.split())
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def _built(ctx, mine, paths, contents):
    """A ShardedLines over `paths`, built while the files still hold their stale contents."""
    _fill(contents, stale=True)
    dataset = mine.ShardedLines(list(paths))
    _fill(contents)
    return dataset


def _judge_epoch(ctx, tagged, expected, n_files, workers, where):
    got = Counter(s for _, s in tagged)
    stale = [v for v in got if v % _PER_FILE >= _STALE]
    if stale:
        ctx.fail(ctx.t("{where}, your dataset yielded {value!r}, which the file held when ShardedLines was built "
                       "and no longer does: read the files inside __iter__, not in __init__ (__init__ runs once, "
                       "in the main process, and every worker would get a copy of all the data)",
                       where=where, value=stale[0]))
    extra = [v for v in got if v not in expected]
    if extra:
        ctx.fail(ctx.t("{where}, your dataset yielded {value!r}, which is not in any file", where=where, value=extra[0]))
    # Line 0 of every file exists: how often it came out is how often the file was read.
    reads = {f: got[f * _PER_FILE] for f in range(n_files)}
    unread = [f for f, n in reads.items() if n == 0]
    repeated = [f for f, n in reads.items() if n > 1]
    name = lambda f: f"data_{f:02d}.txt"  # noqa: E731
    if unread and repeated:
        ctx.fail(ctx.t("{where}, {twice} was read {n} times and {never} never: the workers split the files "
                       "differently from each other. Every worker must split the same list in the same "
                       "order, using only its id and the number of workers (no per-worker shuffling)",
                       where=where, twice=name(repeated[0]), n=reads[repeated[0]], never=name(unread[0])))
    unread_names = ", ".join(name(f) for f in unread[:4])
    if unread and len(unread) >= max(workers, 1):
        ctx.fail(ctx.t("{where}, {n} of {total} files were never read ({files}): together the shares of the "
                       "{workers} worker(s) do not cover the list. Split it by this worker's id and the "
                       "number of workers the DataLoader really started (info.id, info.num_workers)",
                       where=where, n=len(unread), total=n_files, files=unread_names, workers=workers))
    if unread:
        ctx.fail(ctx.t("{where}, {n} of {total} files were never read ({files}): when the file count does not "
                       "divide evenly, the leftover files must still go to some worker",
                       where=where, n=len(unread), total=n_files, files=unread_names))
    if repeated:
        f = repeated[0]
        readers = sorted({w for w, s in tagged if s == f * _PER_FILE})
        if reads[f] >= max(workers, 1) and len(repeated) == n_files:
            ctx.fail(ctx.t("{where}, every file was read {n} times, once by each worker: every worker is "
                           "reading all the files; use get_worker_info() so each worker reads only its own "
                           "share", where=where, n=reads[f]))
        ctx.fail(ctx.t("{where}, {file} was read by workers {readers}: split the files with the number of "
                       "workers the DataLoader really started (info.num_workers)",
                       where=where, file=name(f), readers=readers))
    short = [v for v in expected if got[v] != expected[v]]
    ctx.expect(not short, ctx.t("{where}, sample {sample} came out {n} times: every line of every file must "
                                "come out exactly once", where=where, sample=short[0] if short else 0,
                                n=got[short[0]] if short else 0))
    samples = sorted(s for _, s in tagged)
    ctx.expect_equal(ctx.t("{where}: the samples of the epoch, sorted", where=where), samples, samples)
    if workers >= 2:
        by_file: dict[int, set[int]] = {}
        for w, s in tagged:
            by_file.setdefault(s // _PER_FILE, set()).add(w)
        split = [f for f, ws in by_file.items() if len(ws) > 1]
        ctx.expect(not split, ctx.t("{where}, {file} was read by several workers: shard the list of files, "
                                    "so each file is opened by one worker only",
                                    where=where, file=name(split[0]) if split else ""))
        per_worker = Counter(next(iter(ws)) for ws in by_file.values())
        sizes = [per_worker.get(w, 0) for w in range(workers)]
        ctx.expect(max(sizes) - min(sizes) <= 1,
                   ctx.t("{where}, the workers read {sizes} files each: spread the files evenly "
                         "(shares differ by at most one file)", where=where, sizes=sizes))
        readers = [sorted(sizes), sorted(len(ws) for ws in by_file.values())]
        ctx.expect_equal(ctx.t("{where}: the number of files each worker read and of workers that read each "
                               "file, sorted", where=where), readers, readers)


def check(ctx):
    mine = ctx.learner
    ctx.phase(ctx.t("checking shard() on its own"))
    _check_shard(ctx, mine.shard)

    for trial in ctx.trials(2, label="DataLoader trial"):
        n_files = ctx.choice([5, 7, 11]) if trial == 0 else ctx.choice([7, 13])
        paths, expected, contents = _write_files(ctx, ctx.tmpdir / f"trial{trial}", n_files)
        for workers in (0, 1, 2, 3):
            ctx.phase(ctx.t("DataLoader trial {trial}/2: {n_files} files, num_workers={workers}",
                            trial=trial + 1, n_files=n_files, workers=workers))
            dataset = _built(ctx, mine, paths, contents)
            _run_loader(ctx, dataset, workers, expected, n_files, [
                ctx.t("with {n} files and num_workers={workers}", n=n_files, workers=workers),
                ctx.t("with {n} files and num_workers={workers}, in the second epoch (the first was right: does "
                      "__iter__ change the dataset, e.g. overwrite self.paths?)", n=n_files, workers=workers)])

        if trial == 0:
            # One dataset, used again: first in the main process, then by a DataLoader with workers
            # (each worker gets a copy of the dataset as it is by then), then with other workers.
            dataset = _built(ctx, mine, paths, contents)
            for workers in (0, 2, 3):
                ctx.phase(ctx.t("DataLoader trial {trial}/2: the same dataset again, num_workers={workers}",
                                trial=trial + 1, workers=workers))
                where = ctx.t("with {n} files and num_workers={workers}, a dataset iterated before (in the main "
                              "process or by other workers): does __iter__ keep its share on the dataset? Decide "
                              "it on every __iter__, in a local variable", n=n_files, workers=workers)
                _run_loader(ctx, dataset, workers, expected, n_files, [where, where])

            # A pass in the main process must not reseed the global generators (a worker's own are
            # seeded by the DataLoader; drawing from them is fine).
            reseeded = reseeded_global_rngs(lambda: list(dataset))
            ctx.expect(not reseeded,
                       ctx.t("iterating over ShardedLines reseeded the global generator ({what}): that resets the "
                             "randomness of everything else in the caller's process on every epoch. Split the "
                             "files by worker id alone, without shuffling through a reseeded global generator",
                             what=", ".join(reseeded)))
            ctx.expect_equal(ctx.t("the global generators a pass over ShardedLines reseeded"), reseeded, reseeded)
    ctx.figure("workers_checked", [0, 1, 2, 3], label=ctx.t("num_workers checked: {workers}", workers="0, 1, 2, 3"))


def _run_loader(ctx, dataset, workers, expected, n_files, wheres):
    """Two epochs of a DataLoader over `dataset` (persistent workers keep their copy of the
    dataset for the second epoch), each judged."""
    with warnings.catch_warnings():  # "3 workers but 2 cores suggested": intended here
        warnings.filterwarnings("ignore", message=".*worker processes in total.*")
        loader = DataLoader(_Tagged(dataset), batch_size=None, num_workers=workers,
                            persistent_workers=workers > 0, multiprocessing_context="fork" if workers else None)
        for where in wheres:
            tagged = [(int(w), int(s)) for w, s in loader]
            _judge_epoch(ctx, tagged, expected, n_files, workers, where)
    del loader
