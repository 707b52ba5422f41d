"""Exercise: an IterableDataset that splits its files across DataLoader workers.

Every file holds integer samples, one per line. With `num_workers=0` the main process reads
every file. With `num_workers=n` the DataLoader gives each of the n worker processes its own
copy of this dataset, so each copy must read only its share of the files: every sample has to
come out exactly once, also when the number of files is not a multiple of n.
"""

from typing import Iterator, Sequence

from torch.utils.data import IterableDataset, get_worker_info  # noqa: F401  (you will want it)


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
    by at most one item. Leave `items` itself as it was.
    """
    # TODO: return this worker's share of `items` as a list.
    # Watch out: the number of items is often not a multiple of num_workers (and can be smaller
    # than it). Whatever is left over after equal shares must still go to someone, and no
    # worker may get two more items than another.
    raise NotImplementedError("TODO: split the items across the workers")


class ShardedLines(IterableDataset):
    def __init__(self, paths: Sequence[str]) -> None:
        super().__init__()
        self.paths = [str(p) for p in paths]

    def __iter__(self) -> Iterator[int]:
        # TODO: find out whether this runs in the main process or in a DataLoader worker (and
        # which one, of how many), then yield the samples of the files this process is
        # responsible for.
        # Watch out: every worker runs this same code on its own copy of the dataset, so the
        # workers must agree on the split without talking to each other, and a second epoch
        # must read the same files again.
        raise NotImplementedError("TODO: yield the samples of this worker's files")
