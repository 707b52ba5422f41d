"""Exercise: an IterableDataset that splits its files across DataLoader workers.

Every file holds integer samples, one per line. With `num_workers=0` the main process reads
every file. With `num_workers=n` the DataLoader gives each of the n worker processes its own
copy of this dataset, so each copy must read only its share of the files: every sample has to
come out exactly once, also when the number of files is not a multiple of n.
"""

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
    """The items that worker `worker_id` (0 .. num_workers-1) handles.

    Every item must land in exactly one worker's share, and the shares may differ in size
    by at most one item.
    """
    # TODO: return this worker's share of `items`. A stride `items[worker_id::num_workers]`
    # or balanced ranges both work; `len(items) // num_workers` items per worker does not
    # (it silently drops the remainder).
    raise NotImplementedError("TODO: split the items across the workers")


class ShardedLines(IterableDataset):
    def __init__(self, paths: Sequence[str]) -> None:
        super().__init__()
        self.paths = [str(p) for p in paths]

    def __iter__(self) -> Iterator[int]:
        # TODO: ask get_worker_info(). It is None in the main process (num_workers=0): read
        # every file. In a worker it has .id and .num_workers: read only
        # shard(self.paths, info.id, info.num_workers).
        # TODO: yield the samples of each of those files with read_samples(path).
        raise NotImplementedError("TODO: yield the samples of this worker's files")
