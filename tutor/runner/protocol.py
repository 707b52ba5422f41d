"""Messages between the app/CLI and the runner. Plain Python: no torch, no Textual."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from tutor.i18n import N_
from tutor.status import Status

# Verdict statuses: the members of tutor.status.Status (its words and styles live there).
PASSED, FAILED, ERROR, TIMEOUT = Status.PASSED, Status.FAILED, Status.ERROR, Status.TIMEOUT
CRASHED, SKIPPED, CANCELLED = Status.CRASHED, Status.SKIPPED, Status.CANCELLED
STATUSES = tuple(Status)

# The call contract's categories (tutor.runner.contract): what a call into learner code may not
# leave changed unless the reference's same call changes it too, or the exercise's manifest
# allows it (`allows = ["parameters"]`).
CONTRACT_CATEGORIES: dict[str, str] = {
    "inputs": N_("values, shape or strides of tensors passed in"),
    "parameters": N_("parameters and buffers of modules passed in"),
    "grads": N_("the .grad of tensors and parameters passed in"),
    "training": N_("train/eval mode of modules passed in"),
    "requires-grad": N_("requires_grad of tensors and parameters passed in"),
    "hooks": N_("hooks on modules and tensors passed in"),
    "structure": N_("submodules of modules passed in"),
    "optimizer": N_("the settings of optimizers passed in"),
    "returns-input": N_("returning an argument itself"),
    "grad-output": N_("the incoming gradient inside backward"),
    "rng": N_("reseeding the global random number generators"),
    "grad-mode": N_("grad mode and inference mode"),
    "autocast": N_("autocast state"),
    "default-dtype": N_("the default dtype and device"),
    "threads": N_("torch's thread counts"),
    "flags": N_("deterministic, anomaly, matmul-precision and torch.backends flags"),
    "compile-config": N_("torch._dynamo, torch._inductor and torch._functorch config"),
    "env": N_("environment variables"),
    "cwd": N_("the working directory"),
    "files": N_("files in the run's folder"),
}

OUTPUT_CAP = 64 * 1024  # bytes of the program's output kept per run


@dataclass
class RunRequest:
    """One check: the learner's file against the exercise's solution and checker."""

    exercise: str
    code: str  # path of the code under test (the learner's file, or the solution)
    solution: str
    checker: str
    timeout: float = 60.0
    device: str = "cpu"  # resolved device: "cpu" or "cuda"
    processes: int = 1
    # Every world size the check runs at, in order, when it runs at more than one (a
    # `processes = [2, 4]` manifest; tutor.runner.worlds); empty: `processes` alone.
    worlds: list[int] = field(default_factory=list)
    seed: int | None = None
    memory_limit_mb: int | None = None  # address-space cap for CPU-only runs
    cache_dir: str | None = None  # shared build/compile caches (reused across runs)
    # The checker, solution and the checker's helper modules as the course shipped them (read
    # by the client before any learner code ran): {"checker": text, "solution": text,
    # "helpers": {module: [path, text]}}. Runs never read these files from disk.
    sources: dict[str, Any] | None = None
    lang: str = "en"  # the language of the verdict's reasons

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "RunRequest":
        return cls(**json.loads(text))


@dataclass
class Event:
    """Progress while a run is under way: a phase change, or lines of output."""

    kind: str  # "phase" | "output" | "figure"
    text: str = ""
    elapsed_s: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)


# The figure that names the others in the learner's language: {figure name: label}, from the
# `label=` of ctx.figure/time/memory/build. Figure names stay the keys of history and --json.
FIGURE_LABELS = "_labels"


@dataclass
class Verdict:
    status: str
    reason: str = ""
    details: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    output: str = ""
    output_truncated: bool = False
    duration_s: float = 0.0
    seed: int | None = None

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Verdict":
        return cls(**data)


def encode(kind: str, payload: dict[str, Any]) -> bytes:
    return (json.dumps({"kind": kind, **payload}, default=str) + "\n").encode()


def decode(line: bytes | str) -> dict[str, Any]:
    value = json.loads(line)
    if not isinstance(value, dict):
        raise ValueError("a message must be a JSON object")
    return value
