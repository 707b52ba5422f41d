"""Check: ShardedLines yields every sample exactly once for 0-3 DataLoader workers, two epochs in
a row (persistent workers), each file read by one worker, files spread evenly; `shard` splits
lists exactly and evenly on its own and leaves the list it is given alone."""

import warnings
from collections import Counter

from torch.utils.data import DataLoader, IterableDataset, get_worker_info

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
    cases = [(10, 3), (7, 2), (11, 4), (2, 3), (5, 4), (5, 1), (9, 3), (0, 2), (1, 1)]
    for n_items, n_workers in cases:
        names = [f"file{i:02d}" for i in range(n_items)]
        # a tuple for some cases: shard takes any sequence
        items = tuple(names) if n_items % 2 else list(names)
        parts = [list(shard(items, w, n_workers)) for w in range(n_workers)]
        where = f"shard() of {n_items} items over {n_workers} workers"
        ctx.expect(list(items) == names, f"{where} changed the list it was given: build a new list "
                                         f"for the share and leave `items` as it was")
        counts = Counter(x for p in parts for x in p)
        missing = [x for x in names if counts[x] == 0]
        twice = [x for x in names if counts[x] > 1]
        strange = [x for x in counts if x not in names]
        if strange:
            ctx.fail(f"{where} returned {strange[0]!r}, which is not one of the items")
        ctx.expect(not missing, f"{where} loses {len(missing)} item(s), e.g. {missing[:3]}: "
                                f"the items left over after equal shares must still go to some worker")
        if twice:
            ctx.fail(f"{where} gives {twice[0]!r} to {counts[twice[0]]} workers: "
                     f"each item belongs to exactly one worker")
        sizes = [len(p) for p in parts]
        ctx.expect(max(sizes) - min(sizes) <= 1,
                   f"{where} gives shares of sizes {sizes}: they should differ by at most one item "
                   f"(rounding the share size up leaves the last workers short)")


def _write_files(ctx, folder, n_files):
    paths, expected = [], Counter()
    folder.mkdir()
    for f in range(n_files):
        n_lines = int(ctx.randint(1, 26, (1,)))
        values = [f * _PER_FILE + j for j in range(n_lines)]
        path = folder / f"data_{f:02d}.txt"
        path.write_text("".join(f"{v}\n" for v in values), encoding="utf-8")
        paths.append(str(path))
        expected.update(values)
    return paths, expected


def _judge_epoch(ctx, tagged, expected, n_files, workers, where):
    got = Counter(s for _, s in tagged)
    extra = [v for v in got if v not in expected]
    if extra:
        ctx.fail(f"{where}, your dataset yielded {extra[0]!r}, which is not in any file")
    # Line 0 of every file exists: how often it came out is how often the file was read.
    reads = {f: got[f * _PER_FILE] for f in range(n_files)}
    unread = [f for f, n in reads.items() if n == 0]
    repeated = [f for f, n in reads.items() if n > 1]
    name = lambda f: f"data_{f:02d}.txt"  # noqa: E731
    if unread and repeated:
        ctx.fail(f"{where}, {name(repeated[0])} was read {reads[repeated[0]]} times and "
                 f"{name(unread[0])} never: the workers split the files differently from each other. "
                 f"Every worker must split the same list in the same order, using only its id and "
                 f"the number of workers (no per-worker shuffling)")
    if unread and len(unread) >= max(workers, 1):
        ctx.fail(f"{where}, {len(unread)} of {n_files} files were never read "
                 f"({', '.join(name(f) for f in unread[:4])}): together the shares of the "
                 f"{workers} worker(s) do not cover the list. Split it by this worker's id and the "
                 f"number of workers the DataLoader really started (info.id, info.num_workers)")
    if unread:
        ctx.fail(f"{where}, {len(unread)} of {n_files} files were never read "
                 f"({', '.join(name(f) for f in unread[:4])}): when the file count does not divide "
                 f"evenly, the leftover files must still go to some worker")
    if repeated:
        f = repeated[0]
        readers = sorted({w for w, s in tagged if s == f * _PER_FILE})
        if reads[f] >= max(workers, 1) and len(repeated) == n_files:
            ctx.fail(f"{where}, every file was read {reads[f]} times, once by each worker: every "
                     f"worker is reading all the files; use get_worker_info() so each worker reads "
                     f"only its own share")
        ctx.fail(f"{where}, {name(f)} was read by workers {readers}: split the files with the "
                 f"number of workers the DataLoader really started (info.num_workers)")
    short = [v for v in expected if got[v] != expected[v]]
    ctx.expect(not short, f"{where}, sample {short[0] if short else 0} came out {got[short[0]] if short else 0} "
                          f"times: every line of every file must come out exactly once")
    if workers >= 2:
        by_file: dict[int, set[int]] = {}
        for w, s in tagged:
            by_file.setdefault(s // _PER_FILE, set()).add(w)
        split = [f for f, ws in by_file.items() if len(ws) > 1]
        ctx.expect(not split, f"{where}, {name(split[0]) if split else ''} was read by several "
                              f"workers: shard the list of files, so each file is opened by one "
                              f"worker only")
        per_worker = Counter(next(iter(ws)) for ws in by_file.values())
        sizes = [per_worker.get(w, 0) for w in range(workers)]
        ctx.expect(max(sizes) - min(sizes) <= 1,
                   f"{where}, the workers read {sizes} files each: spread the files evenly "
                   f"(shares differ by at most one file)")


def check(ctx):
    mine = ctx.learner
    ctx.phase("checking shard() on its own")
    _check_shard(ctx, mine.shard)

    for trial in ctx.trials(2, label="DataLoader trial"):
        n_files = ctx.choice([5, 7, 11]) if trial == 0 else ctx.choice([7, 13])
        paths, expected = _write_files(ctx, ctx.tmpdir / f"trial{trial}", n_files)
        for workers in (0, 1, 2, 3):
            ctx.phase(f"DataLoader trial {trial + 1}/2: {n_files} files, num_workers={workers}")
            dataset = mine.ShardedLines(list(paths))
            with warnings.catch_warnings():  # "3 workers but 2 cores suggested": intended here
                warnings.filterwarnings("ignore", message=".*worker processes in total.*")
                # persistent workers keep their copy of the dataset for the second epoch
                loader = DataLoader(_Tagged(dataset), batch_size=None, num_workers=workers,
                                    persistent_workers=workers > 0,
                                    multiprocessing_context="fork" if workers else None)
                for epoch in (1, 2):
                    tagged = [(int(w), int(s)) for w, s in loader]
                    where = f"with {n_files} files and num_workers={workers}"
                    if epoch == 2:
                        where += (", in the second epoch (the first was right: does __iter__ "
                                  "change the dataset, e.g. overwrite self.paths?)")
                    _judge_epoch(ctx, tagged, expected, n_files, workers, where)
            del loader
    ctx.figure("workers_checked", [0, 1, 2, 3])
