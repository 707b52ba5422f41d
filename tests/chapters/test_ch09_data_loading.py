"""Chapter 9 (datasets and samplers): the solutions pass; realistic mistakes fail with a helpful reason."""

import re

import pytest

from .conftest import assert_fails, assert_passes, mutate

pytestmark = pytest.mark.slow


# -- sharded IterableDataset ------------------------------------------------------------------

SHARDED_PATHS = "paths = self.paths if info is None else shard(self.paths, info.id, info.num_workers)  # key"
SHARD_LINE = "return list(items)[worker_id::num_workers]  # key"


def test_sharded_solution_passes(solution_verdict):
    assert_passes(solution_verdict("sharded-iterable"))


def test_sharded_contiguous_balanced_ranges_pass(variant):
    # correct but different: contiguous ranges, the first `extra` workers take one more item
    variant(
        "sharded-iterable",
        SHARD_LINE,
        "base, extra = divmod(len(items), num_workers)\n"
        "    start = worker_id * base + min(worker_id, extra)\n"
        "    return list(items[start:start + base + (worker_id < extra)])",
    )


def test_sharded_rounded_up_chunks_are_uneven(mutant):
    # ceil-sized chunks lose nothing, but leave the last workers with much less (or nothing)
    v = mutant(
        "sharded-iterable",
        SHARD_LINE,
        "per = -(-len(items) // num_workers)\n    return list(items)[worker_id * per:(worker_id + 1) * per]",
    )
    assert_fails(v, "shares of sizes", "at most one item")


def test_sharded_floor_division_in_iter_only_loses_files(mutant):
    # shard() is right, but __iter__ slices with len // n itself: files go unread in the loader
    v = mutant(
        "sharded-iterable",
        SHARDED_PATHS,
        "if info is None:\n"
        "            paths = self.paths\n"
        "        else:\n"
        "            per = len(self.paths) // info.num_workers\n"
        "            paths = self.paths[info.id * per:(info.id + 1) * per]",
    )
    assert_fails(v, "never read", "num_workers=2", "leftover")


def test_sharded_per_worker_shuffle_is_blamed_on_the_split(mutant):
    # each worker shuffles its own copy of the file list: the workers no longer agree
    v = mutant(
        "sharded-iterable",
        SHARDED_PATHS,
        "import random\n"
        "        order = list(self.paths)\n"
        "        random.shuffle(order)\n"
        "        paths = order if info is None else shard(order, info.id, info.num_workers)",
    )
    assert_fails(v, "split the files differently", "no per-worker shuffling")


def test_sharded_assumed_two_workers(mutant):
    v = mutant(
        "sharded-iterable", SHARDED_PATHS, "paths = self.paths if info is None else shard(self.paths, info.id, 2)"
    )
    assert_fails(v, "num_workers=1", "do not cover", "info.num_workers")


def test_sharded_by_sample_reads_every_file_in_every_worker(mutant):
    v = mutant(
        "sharded-iterable",
        f"        {SHARDED_PATHS}\n        for path in paths:\n            yield from read_samples(path)",
        "        samples = [s for p in self.paths for s in read_samples(p)]\n"
        "        yield from (samples if info is None else shard(samples, info.id, info.num_workers))",
    )
    assert_fails(v, "several workers")


def test_sharded_loaders_forced_into_the_main_process_fail(mutant):
    """A learner file that patches DataLoader at import to start no workers: the checker's own
    loaders run in one process too, so each file has one reader and the facts hold (the checker
    passed it before); the files per worker, taken from the reference run, do not."""
    v = mutant(
        "sharded-iterable",
        "from torch.utils.data import IterableDataset, get_worker_info\n",
        "from torch.utils.data import DataLoader, IterableDataset, get_worker_info\n\n"
        "_init = DataLoader.__init__\n\n\n"
        "def _in_process(self, *args, **kwargs):\n"
        "    kwargs.update(num_workers=0, persistent_workers=False, multiprocessing_context=None)\n"
        "    _init(self, *args, **kwargs)\n\n\n"
        "DataLoader.__init__ = _in_process\n",
    )
    assert_fails(v, "the number of files each worker read and of workers that read each file, sorted[0]")


# -- balanced class sampler -------------------------------------------------------------------

BY_CLASS = "self.by_class = [(labels == c).nonzero().flatten() for c in classes]  # key"
PICK = "pick = torch.randint(len(idx), (int(where.sum()),), generator=g)  # key"


def test_balanced_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("balanced-sampler"))
    assert "build_time_200k_labels" in v.figures


def test_balanced_inverse_frequency_weights_pass(variant):
    # correct but different: one multinomial draw with weight 1/(size of the item's class)
    variant(
        "balanced-sampler",
        (
            "        yield from out.tolist()",
            "        yield from torch.multinomial(self.weights, n, replacement=True, generator=g).tolist()",
        ),
        (
            "        self.generator = torch.Generator().manual_seed(seed)  # key",
            "        self.generator = torch.Generator().manual_seed(seed)\n"
            "        counts = torch.bincount(torch.unique(labels, return_inverse=True)[1])\n"
            "        self.weights = 1.0 / counts[torch.unique(labels, return_inverse=True)[1]].double()",
        ),
    )


def test_balanced_global_rng_is_not_reproducible(check_code, solution_text):
    src = mutate(
        solution_text("balanced-sampler"),
        ("self.generator = torch.Generator().manual_seed(seed)", "np.random.seed(seed)\n        self.generator = None"),
    )
    for seed in (11, 12):
        v = check_code("balanced-sampler", "import numpy as np\n" + src, seed=seed)
        assert_fails(v, "same labels and seed gave different orders")


def test_balanced_never_draws_the_last_item_of_a_class(mutant):
    v = mutant("balanced-sampler", PICK, "pick = torch.randint(max(len(idx) - 1, 1), (int(where.sum()),), generator=g)")
    assert_fails(v, "never came up", "every item of a class")


def test_balanced_favours_the_first_items_of_a_class(mutant):
    # a "random" position scaled by a squared uniform: every item possible, the first far likelier
    v = mutant(
        "balanced-sampler",
        PICK,
        "u = torch.rand(int(where.sum()), generator=g) ** 2\n            pick = (u * len(idx)).long()",
    )
    assert_fails(v, "first", "uniformly among all the items")


def test_balanced_assumes_class_ids_0_to_k(mutant):
    v = mutant(
        "balanced-sampler", BY_CLASS, "self.by_class = [(labels == c).nonzero().flatten() for c in range(len(classes))]"
    )
    assert_fails(v, "raised", "classes taken from the labels")


def test_balanced_len_of_dataset_is_wrong(mutant):
    v = mutant(
        "balanced-sampler", "        return self.num_samples", "        return sum(len(i) for i in self.by_class)"
    )
    assert_fails(v, "len(sampler)", "num_samples")


def test_balanced_seed_ignored(mutant):
    v = mutant("balanced-sampler", "torch.Generator().manual_seed(seed)  # key", "torch.Generator().manual_seed(0)")
    assert_fails(v, "gave the same order", "use the seed")


def test_balanced_sorting_the_callers_labels_fails(mutant):
    v = mutant(
        "balanced-sampler",
        "        labels = torch.as_tensor(labels, dtype=torch.long).flatten()",
        "        if isinstance(labels, list):\n"
        "            labels.sort()\n"
        "        labels = torch.as_tensor(labels, dtype=torch.long).flatten()",
    )
    assert_fails(v, "changed the labels it was given")


def test_balanced_one_stream_for_every_epoch_fails(mutant):
    """The stream of indices made once in __init__: the first pass is right and the empty second
    pass differs from it, so every fact holds (the checker passed it before); how many indices the
    later passes yield, compared with the reference run's, does not."""
    v = mutant(
        "balanced-sampler",
        (
            "        self.generator = torch.Generator().manual_seed(seed)  # key\n",
            "        self.generator = torch.Generator().manual_seed(seed)  # key\n"
            "        self._stream = self._draw()\n",
        ),
        (
            "    def __iter__(self) -> Iterator[int]:\n",
            "    def __iter__(self) -> Iterator[int]:\n        return self._stream\n\n"
            "    def _draw(self) -> Iterator[int]:\n",
        ),
    )
    assert_fails(v, "the number of indices yielded by the same seed's sampler, by the next epoch", "[1] is 0")


# -- padding collate --------------------------------------------------------------------------

LENGTHS = "    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.long)  # key"
RETURN = "    return padded, lengths, torch.tensor(labels, dtype=torch.long)"


def test_pad_collate_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("pad-collate"))
    # The pass teaches what padding to each batch's longest saves against one fixed length.
    real = int(re.search(r"\((\d+) real tokens\)", v.figures["_labels"]["pad_positions"]).group(1))
    longest = int(re.search(r"longest \((\d+)\)", v.figures["_labels"]["fixed_length_pad_positions"]).group(1))
    assert v.figures["fixed_length_pad_positions"] == 11 * longest - real
    assert 0 < v.figures["pad_positions"] < v.figures["fixed_length_pad_positions"]


def test_pad_collate_by_hand_passes(variant):
    # correct but different: a PAD-filled tensor of the right shape, each sequence copied in
    variant(
        "pad-collate",
        "    padded = pad_sequence(list(seqs), batch_first=True, padding_value=PAD)  # key",
        "    longest = max(s.shape[0] for s in seqs)\n"
        "    padded = seqs[0].new_full((len(seqs), longest, *seqs[0].shape[1:]), PAD)\n"
        "    for i, s in enumerate(seqs):\n"
        "        padded[i, :len(s)] = s",
    )


def test_pad_collate_lengths_after_padding(mutant):
    v = mutant(
        "pad-collate", RETURN, "    lengths = torch.full((len(seqs),), padded.shape[1], dtype=torch.long)\n" + RETURN
    )
    assert_fails(v, "lengths (the lengths before padding)")


def test_pad_collate_lengths_as_a_list(mutant):
    v = mutant("pad-collate", LENGTHS, "    lengths = [s.shape[0] for s in seqs]")
    assert_fails(v, "lengths is a list", "int64 tensor")


def test_pad_collate_sorted_by_length(mutant):
    # sorting like pack_padded_sequence(enforce_sorted=True) wants: the labels no longer match
    v = mutant(
        "pad-collate",
        "    seqs, labels = zip(*batch)",
        "    seqs, labels = zip(*sorted(batch, key=lambda b: -b[0].shape[0]))",
    )
    assert_fails(v, "different order", "enforce_sorted=False")


def test_pad_collate_fixed_length(mutant):
    v = mutant(
        "pad-collate",
        "    padded = pad_sequence(list(seqs), batch_first=True, padding_value=PAD)  # key",
        "    seqs = list(seqs) + [seqs[0].new_zeros((32, *seqs[0].shape[1:]))]\n"
        "    padded = pad_sequence(seqs, batch_first=True, padding_value=PAD)[:-1]\n"
        "    seqs = seqs[:-1]",
    )
    assert_fails(v, "not to a fixed length")


def test_pad_collate_wrong_padding_value(mutant):
    assert_fails(mutant("pad-collate", "padding_value=PAD", "padding_value=-1"), "padded positions", "PAD=0")


# -- mistakes the call contract cannot see (found by blind mutants) ----------------------------


def test_sharded_returning_items_itself_for_one_worker(mutant):
    v = mutant(
        "sharded-iterable", SHARD_LINE, "return items if num_workers == 1 else list(items)[worker_id::num_workers]"
    )
    assert_fails(v, "returned `items` itself", "new list")


def test_sharded_reading_the_files_in_init(mutant):
    v = mutant(
        "sharded-iterable",
        (
            "        self.paths = [str(p) for p in paths]",
            "        self.paths = [str(p) for p in paths]\n"
            "        self.samples = {p: list(read_samples(p)) for p in self.paths}",
        ),
        ("            yield from read_samples(path)", "            yield from self.samples[path]"),
    )
    assert_fails(v, "when ShardedLines was built", "inside __iter__, not in __init__")


def test_sharded_share_cached_on_the_dataset(mutant):
    v = mutant(
        "sharded-iterable",
        SHARDED_PATHS,
        "if not hasattr(self, '_mine'):\n"
        "            self._mine = self.paths if info is None else shard(self.paths, info.id, info.num_workers)\n"
        "        paths = self._mine",
    )
    assert_fails(v, "a dataset iterated before", "keep its share on the dataset")


def test_sharded_reseeding_pythons_random(mutant):
    v = mutant("sharded-iterable", SHARDED_PATHS, "import random\n        random.seed(0)\n        " + SHARDED_PATHS)
    assert_fails(v, "reseeded the global generator (random.seed)")


def test_balanced_classes_in_blocks(mutant):
    v = mutant(
        "balanced-sampler",
        "        cls = torch.randint(len(self.by_class), (n,), generator=g)  # key",
        "        cls = torch.randint(len(self.by_class), (n,), generator=g).sort().values",
    )
    assert_fails(v, "consecutive indices have the same class")


def test_balanced_reseeding_the_global_torch_rng(mutant):
    v = mutant(
        "balanced-sampler",
        "        g, n = self.generator, self.num_samples",
        "        torch.manual_seed(len(self.by_class))\n        g, n = self.generator, self.num_samples",
    )
    assert_fails(v, "reseeded the global generator (torch.manual_seed)")


def test_pad_collate_single_sample_view(mutant):
    v = mutant(
        "pad-collate",
        "    padded = pad_sequence(list(seqs), batch_first=True, padding_value=PAD)  # key",
        "    padded = seqs[0].unsqueeze(0) if len(seqs) == 1 else "
        "pad_sequence(list(seqs), batch_first=True, padding_value=PAD)",
    )
    assert_fails(v, "shares its memory")


def test_pad_collate_lengths_on_the_data_device(mutant):
    v = mutant(
        "pad-collate",
        "    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.long)  # key",
        "    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.long, device=seqs[0].device)",
    )
    assert_fails(v, "lengths are on meta", "on the CPU")
