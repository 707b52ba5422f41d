"""Check: ShardedLines yields every sample exactly once for 0-3 DataLoader workers, each file read
by one worker, files spread evenly; `shard` splits lists exactly and evenly on its own."""

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
    cases = [(10, 3), (7, 2), (11, 4), (2, 3), (5, 1), (9, 3), (0, 2)]
    for n_items, n_workers in cases:
        items = [f"file{i:02d}" for i in range(n_items)]
        parts = [list(shard(items, w, n_workers)) for w in range(n_workers)]
        where = f"shard() of {n_items} items over {n_workers} workers"
        counts = Counter(x for p in parts for x in p)
        missing = [x for x in items if counts[x] == 0]
        twice = [x for x in items if counts[x] > 1]
        ctx.expect(not missing, f"{where} loses {len(missing)} item(s), e.g. {missing[:3]}: "
                                f"the remainder left by len(items) // num_workers must go to some worker")
        if twice:
            ctx.fail(f"{where} gives {twice[0]!r} to {counts[twice[0]]} workers: "
                     f"each item belongs to exactly one worker")
        sizes = [len(p) for p in parts]
        ctx.expect(max(sizes) - min(sizes) <= 1,
                   f"{where} gives shares of sizes {sizes}: they should differ by at most one item")


def check(ctx):
    mine = ctx.learner
    ctx.phase("checking shard() on its own")
    _check_shard(ctx, mine.shard)

    for trial in ctx.trials(2, label="DataLoader trial"):
        n_files = ctx.choice([5, 7, 11]) if trial == 0 else ctx.choice([7, 13])
        paths, expected = [], Counter()
        folder = ctx.tmpdir / f"trial{trial}"
        folder.mkdir()
        for f in range(n_files):
            n_lines = int(ctx.randint(1, 26, (1,)))
            values = [f * _PER_FILE + j for j in range(n_lines)]
            path = folder / f"data_{f:02d}.txt"
            path.write_text("".join(f"{v}\n" for v in values), encoding="utf-8")
            paths.append(str(path))
            expected.update(values)

        for workers in (0, 1, 2, 3):
            ctx.phase(f"DataLoader trial {trial + 1}/2: {n_files} files, num_workers={workers}")
            dataset = mine.ShardedLines(paths)
            with warnings.catch_warnings():  # "3 workers but 2 cores suggested": intended here
                warnings.filterwarnings("ignore", message=".*worker processes in total.*")
                loader = DataLoader(_Tagged(dataset), batch_size=None, num_workers=workers,
                                    multiprocessing_context="fork" if workers else None)
                tagged = [(int(w), int(s)) for w, s in loader]
            got = Counter(s for _, s in tagged)
            where = f"with {n_files} files and num_workers={workers}"

            missing = sorted((expected - got).elements())
            if missing:
                files = sorted({f"data_{v // _PER_FILE:02d}.txt" for v in missing})
                ctx.fail(f"{where}, {len(missing)} of {sum(expected.values())} samples never came out "
                         f"(from {', '.join(files[:4])}): when the file count does not divide evenly, "
                         f"the leftover files must still go to some worker")
            extra = sorted((got - expected).elements())
            if extra:
                v = extra[0]
                if v in expected:
                    ctx.fail(f"{where}, {len(extra)} samples came out more than once (sample {v} came "
                             f"{got[v]} times): every worker is reading the same files; use "
                             f"get_worker_info() so each worker reads only its own share")
                ctx.fail(f"{where}, your dataset yielded {v!r}, which is not in any file")

            if workers >= 2:
                by_file: dict[int, set[int]] = {}
                for w, s in tagged:
                    by_file.setdefault(s // _PER_FILE, set()).add(w)
                split = [f for f, ws in by_file.items() if len(ws) > 1]
                ctx.expect(not split, f"{where}, file data_{split[0] if split else 0:02d}.txt was read by "
                                      f"several workers: shard the list of files, so each file is opened "
                                      f"by one worker only")
                per_worker = Counter(next(iter(ws)) for ws in by_file.values())
                sizes = [per_worker.get(w, 0) for w in range(workers)]
                ctx.expect(max(sizes) - min(sizes) <= 1,
                           f"{where}, the workers read {sizes} files each: spread the files evenly "
                           f"(shares differ by at most one file)")
    ctx.figure("workers_checked", [0, 1, 2, 3])
