"""WRONG: computes this process's share on the first __iter__ and caches it on the dataset, so a dataset first iterated in the main process (all files) and then handed to a DataLoader with workers makes every worker read every file ("every sample exactly once" breaks on the second use)."""

from typing import Iterator, Sequence

from torch.utils.data import IterableDataset, get_worker_info


def read_samples(path: str) -> Iterator[int]:
    """The samples of one file, in order (given: no need to change it)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                yield int(line)


def shard(items: Sequence, worker_id: int, num_workers: int) -> list:
    """The items that worker `worker_id` (0 .. num_workers-1) handles."""
    return list(items)[worker_id::num_workers]


class ShardedLines(IterableDataset):
    def __init__(self, paths: Sequence[str]) -> None:
        super().__init__()
        self.paths = [str(p) for p in paths]

        self._mine: list[str] | None = None

    def __iter__(self) -> Iterator[int]:
        if self._mine is None:  # decide the share once; later epochs reuse it
            info = get_worker_info()
            self._mine = self.paths if info is None else shard(self.paths, info.id, info.num_workers)
        for path in self._mine:
            yield from read_samples(path)
