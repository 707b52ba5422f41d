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
        where = ctx.t("shard() of {n} items over {workers} workers", n=n_items, workers=n_workers)
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


def check(ctx):
    mine = ctx.learner
    ctx.phase(ctx.t("checking shard() on its own"))
    _check_shard(ctx, mine.shard)

    for trial in ctx.trials(2, label="DataLoader trial"):
        n_files = ctx.choice([5, 7, 11]) if trial == 0 else ctx.choice([7, 13])
        paths, expected = _write_files(ctx, ctx.tmpdir / f"trial{trial}", n_files)
        for workers in (0, 1, 2, 3):
            ctx.phase(ctx.t("DataLoader trial {trial}/2: {n_files} files, num_workers={workers}",
                            trial=trial + 1, n_files=n_files, workers=workers))
            dataset = mine.ShardedLines(list(paths))
            with warnings.catch_warnings():  # "3 workers but 2 cores suggested": intended here
                warnings.filterwarnings("ignore", message=".*worker processes in total.*")
                # persistent workers keep their copy of the dataset for the second epoch
                loader = DataLoader(_Tagged(dataset), batch_size=None, num_workers=workers,
                                    persistent_workers=workers > 0,
                                    multiprocessing_context="fork" if workers else None)
                for epoch in (1, 2):
                    tagged = [(int(w), int(s)) for w, s in loader]
                    if epoch == 1:
                        where = ctx.t("with {n} files and num_workers={workers}", n=n_files, workers=workers)
                    else:
                        where = ctx.t("with {n} files and num_workers={workers}, in the second epoch (the "
                                      "first was right: does __iter__ change the dataset, e.g. overwrite "
                                      "self.paths?)", n=n_files, workers=workers)
                    _judge_epoch(ctx, tagged, expected, n_files, workers, where)
            del loader
    ctx.figure("workers_checked", [0, 1, 2, 3])
