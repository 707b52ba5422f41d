"""Chapter 9 (datasets and samplers): the solutions pass; realistic mistakes fail with a helpful reason."""

import pytest

pytestmark = pytest.mark.slow


def _mutate(text: str, old: str, new: str) -> str:
    assert old in text, f"mutation anchor not found: {old!r}"
    return text.replace(old, new)


# -- sharded IterableDataset ------------------------------------------------------------------

def test_sharded_solution_passes(check_code, solution_text):
    v = check_code("sharded-iterable", solution_text("sharded-iterable"))
    assert v.status == "passed", (v.reason, v.details, v.output)


def test_sharded_floor_division_drops_remainder(check_code, solution_text):
    src = _mutate(solution_text("sharded-iterable"),
                  "return list(items)[worker_id::num_workers]",
                  "per = len(items) // num_workers\n"
                  "    return list(items)[worker_id * per:(worker_id + 1) * per]")
    v = check_code("sharded-iterable", src)
    assert v.status == "failed"
    assert "loses" in v.reason and "remainder" in v.reason


def test_sharded_floor_division_in_iter_only_loses_samples(check_code, solution_text):
    # shard() is right, but __iter__ slices with len // n itself: samples go missing in the loader
    src = _mutate(solution_text("sharded-iterable"),
                  "paths = self.paths if info is None else shard(self.paths, info.id, info.num_workers)",
                  "if info is None:\n"
                  "            paths = self.paths\n"
                  "        else:\n"
                  "            per = len(self.paths) // info.num_workers\n"
                  "            paths = self.paths[info.id * per:(info.id + 1) * per]")
    v = check_code("sharded-iterable", src)
    assert v.status == "failed"
    assert "never came out" in v.reason and "num_workers=2" in v.reason


def test_sharded_without_worker_info_duplicates(check_code, solution_text):
    src = _mutate(solution_text("sharded-iterable"),
                  "paths = self.paths if info is None else shard(self.paths, info.id, info.num_workers)",
                  "paths = self.paths")
    v = check_code("sharded-iterable", src)
    assert v.status == "failed"
    assert "more than once" in v.reason and "get_worker_info" in v.reason


def test_sharded_by_sample_reads_every_file_in_every_worker(check_code, solution_text):
    src = _mutate(solution_text("sharded-iterable"),
                  "        paths = self.paths if info is None else shard(self.paths, info.id, info.num_workers)\n"
                  "        for path in paths:\n"
                  "            yield from read_samples(path)",
                  "        samples = [s for p in self.paths for s in read_samples(p)]\n"
                  "        yield from (samples if info is None else shard(samples, info.id, info.num_workers))")
    v = check_code("sharded-iterable", src)
    assert v.status == "failed"
    assert "several workers" in v.reason


# -- balanced class sampler -------------------------------------------------------------------

def test_balanced_solution_passes(check_code, solution_text):
    v = check_code("balanced-sampler", solution_text("balanced-sampler"))
    assert v.status == "passed", (v.reason, v.details, v.output)
    assert "build_time_200k_labels" in v.figures


def test_balanced_global_rng_is_not_reproducible(check_code, solution_text):
    src = _mutate(solution_text("balanced-sampler"),
                  "self.generator = torch.Generator().manual_seed(seed)",
                  "np.random.seed(seed)\n        self.generator = None")
    src = "import numpy as np\n" + src
    v = check_code("balanced-sampler", src)
    assert v.status == "failed"
    assert "same labels and seed gave different orders" in v.reason


def test_balanced_uniform_indices_are_not_balanced(check_code, solution_text):
    src = _mutate(solution_text("balanced-sampler"),
                  "        yield from out.tolist()",
                  "        total = sum(len(i) for i in self.by_class)\n"
                  "        yield from torch.randint(total, (n,), generator=g).tolist()")
    v = check_code("balanced-sampler", src)
    assert v.status == "failed"
    assert "of the time" in v.reason and "equally often" in v.reason


def test_balanced_len_of_dataset_is_wrong(check_code, solution_text):
    src = _mutate(solution_text("balanced-sampler"),
                  "        return self.num_samples",
                  "        return sum(len(i) for i in self.by_class)")
    v = check_code("balanced-sampler", src)
    assert v.status == "failed"
    assert "len(sampler)" in v.reason and "num_samples" in v.reason


def test_balanced_generator_reseeded_each_pass_repeats_epochs(check_code, solution_text):
    src = _mutate(solution_text("balanced-sampler"),
                  "        g, n = self.generator, self.num_samples",
                  "        g, n = torch.Generator().manual_seed(self.seed), self.num_samples")
    src = _mutate(src, "        self.num_samples = num_samples\n",
                  "        self.num_samples = num_samples\n        self.seed = seed\n")
    v = check_code("balanced-sampler", src)
    assert v.status == "failed"
    assert "second pass" in v.reason


# -- padding collate --------------------------------------------------------------------------

def test_pad_collate_solution_passes(check_code, solution_text):
    v = check_code("pad-collate", solution_text("pad-collate"))
    assert v.status == "passed", (v.reason, v.details, v.output)


def test_pad_collate_time_major_layout(check_code, solution_text):
    src = _mutate(solution_text("pad-collate"), "batch_first=True", "batch_first=False")
    v = check_code("pad-collate", src)
    assert v.status == "failed"
    assert "batch_first=True" in v.reason


def test_pad_collate_lengths_after_padding(check_code, solution_text):
    src = _mutate(solution_text("pad-collate"),
                  "    return padded, lengths, torch.tensor(labels, dtype=torch.long)",
                  "    lengths = torch.full((len(seqs),), padded.shape[1], dtype=torch.long)\n"
                  "    return padded, lengths, torch.tensor(labels, dtype=torch.long)")
    v = check_code("pad-collate", src)
    assert v.status == "failed"
    assert "lengths" in v.reason


def test_pad_collate_wrong_padding_value(check_code, solution_text):
    src = _mutate(solution_text("pad-collate"), "padding_value=PAD", "padding_value=-1")
    v = check_code("pad-collate", src)
    assert v.status == "failed"
    assert "padded positions" in v.reason and "PAD=0" in v.reason
