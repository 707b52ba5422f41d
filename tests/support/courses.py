"""A small, fixed course for the UI tests: chapter 2 holds the real `sigmoid` exercise files
(so the slow tests run the real runner), chapter 3 a CUDA-only exercise. Fixed text keeps
the snapshots stable while the real lessons are still being written."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "lessons" / "02-custom-autograd"

CH2_TOML = """format_version = 1
title = "Custom autograd Functions"
summary = "Write forward and backward yourself."
languages = ["en"]

[[steps]]
kind = "read"
id = "why"
title = "Why write your own Function"
text = "01-why.md"

[[steps]]
kind = "passage"
id = "first-function"
title = "A first Function"
text = "02-first-function.md"

[[steps]]
kind = "exercise"
id = "sigmoid"
title = "Sigmoid that reuses its output"
text = "03-sigmoid.md"
stub = "exercises/sigmoid.py"
solution = "sigmoid.py"
checker = "checks/sigmoid.py"
timeout = 120
hints = [
  "Backward needs the *output* of forward, not its input.",
  "In forward: `s = torch.sigmoid(x)` then `ctx.save_for_backward(s)`.",
  "In backward: `(s,) = ctx.saved_tensors` and return `grad_out * s * (1 - s)`.",
]

[[steps]]
kind = "read"
id = "recap"
title = "Recap"
text = "04-recap.md"
"""

CH3_TOML = """format_version = 1
title = "Custom C++ and CUDA operators"
summary = "Kernels of your own."
languages = ["en"]

[[steps]]
kind = "read"
id = "intro"
title = "Operators in C++"
text = "01-intro.md"

[[steps]]
kind = "exercise"
id = "cuda-add"
title = "A CUDA add kernel"
text = "02-add.md"
stub = "exercises/add.py"
solution = "add.py"
checker = "checks/add.py"
hints = ["one", "two", "three"]
needs = { device = "cuda" }
"""

GUIDES = {
    "02-custom-autograd": {
        "01-why.md": "# Why write your own Function\n\nAutograd records operations. Sometimes you "
        "know a cheaper backward.\n\n```python\ny = torch.sigmoid(x)\n```\n",
        "02-first-function.md": "# A first Function\n\nType this along:\n\n```python\n"
        "class Double(torch.autograd.Function):\n    @staticmethod\n"
        "    def forward(ctx, x):\n        return 2 * x  # the gradient of 2 * x is 2: backward scales grad_out\n\n\n"
        "y = Double.apply(torch.randn(3, requires_grad=True))  # a node in the graph, not a plain tensor\n```\n",
        "03-sigmoid.md": "# Sigmoid that reuses its output\n\nThe derivative of `s = sigmoid(x)` "
        "is `s * (1 - s)`. Save `s` in forward and use it in backward.\n",
        "04-recap.md": "# Recap\n\nYou saved outputs instead of inputs.\n",
    },
    "03-cpp-ops": {
        "01-intro.md": "# Operators in C++\n\nWhy and when.\n",
        "02-add.md": "# A CUDA add kernel\n\nAdd two tensors on the GPU.\n",
    },
}


# The stub is fixed here (snapshots show it); the checker and solution are the real ones.
SIGMOID_STUB = '''"""Exercise: sigmoid as a custom autograd Function that reuses its forward output.

sigmoid(x) = 1 / (1 + exp(-x)); its derivative is s * (1 - s) where s = sigmoid(x).
"""

import torch


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        # TODO: compute s = torch.sigmoid(x) and save it with ctx.save_for_backward
        raise NotImplementedError("TODO: implement Sigmoid.forward")

    @staticmethod
    def backward(ctx, grad_out):
        # TODO: fetch s from ctx.saved_tensors and return grad_out * s * (1 - s)
        raise NotImplementedError("TODO: implement Sigmoid.backward")


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return Sigmoid.apply(x)
'''


def build_course(root: Path) -> Path:
    """Write the course under `root` (lessons/ and solutions/); return root."""
    ch2 = root / "lessons" / "02-custom-autograd"
    ch3 = root / "lessons" / "03-cpp-ops"
    for ch, toml in ((ch2, CH2_TOML), (ch3, CH3_TOML)):
        (ch / "guide" / "en").mkdir(parents=True)
        (ch / "exercises").mkdir()
        (ch / "checks").mkdir()
        (ch / "lesson.toml").write_text(toml)
        for name, text in GUIDES[ch.name].items():
            (ch / "guide" / "en" / name).write_text(text)
    (ch2 / "exercises" / "sigmoid.py").write_text(SIGMOID_STUB)
    shutil.copy(REAL / "checks" / "sigmoid.py", ch2 / "checks" / "sigmoid.py")
    for helper in (REAL / "checks").glob("_*.py"):  # the checker's shared helpers
        shutil.copy(helper, ch2 / "checks" / helper.name)
    sol2 = root / "solutions" / "02-custom-autograd"
    sol2.mkdir(parents=True)
    shutil.copy(REPO / "solutions" / "02-custom-autograd" / "sigmoid.py", sol2 / "sigmoid.py")
    (ch3 / "exercises" / "add.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    (ch3 / "checks" / "add.py").write_text("def check(ctx):\n    pass\n")
    sol3 = root / "solutions" / "03-cpp-ops"
    sol3.mkdir(parents=True)
    (sol3 / "add.py").write_text("def add(a, b):\n    return a + b\n")
    return root


SOLUTION = (REPO / "solutions" / "02-custom-autograd" / "sigmoid.py").read_text()


CPU_BEFORE_CUDA = """
[[steps]]
kind = "exercise"
id = "cpu-add"
title = "An add on the CPU"
text = "02-add.md"
stub = "exercises/cpu_add.py"
solution = "cpu_add.py"
checker = "checks/add.py"
hints = ["one", "two", "three"]
"""

OUTRO = """
[[steps]]
kind = "read"
id = "outro"
title = "What the kernel did"
text = "01-intro.md"
"""


def build_course_cpu_before_cuda(root: Path) -> Path:
    """The course above with chapter 3 as intro, cpu-add, cuda-add (CUDA only), outro: what
    comes after a pass of cpu-add depends on whether this machine can run cuda-add."""
    build_course(root)
    ch3 = root / "lessons" / "03-cpp-ops"
    toml = ch3 / "lesson.toml"
    text = toml.read_text()
    cuda = text.index('[[steps]]\nkind = "exercise"')
    toml.write_text(text[:cuda] + CPU_BEFORE_CUDA.lstrip("\n") + "\n" + text[cuda:] + OUTRO)
    (ch3 / "exercises" / "cpu_add.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    (root / "solutions" / "03-cpp-ops" / "cpu_add.py").write_text("def add(a, b):\n    return a + b\n")
    return root
