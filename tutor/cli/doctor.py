"""`tutor doctor`: what this machine has, which chapters and exercises can run on it, and for
each missing prerequisite the command or step that fixes it."""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
from typing import Any
import sysconfig
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tutor import i18n
from tutor.course import load_course
from tutor.i18n import _
from tutor.steps import needs_text

# Run in a child so that a broken torch install is reported, not raised, and the CLI stays light.
_PROBE = r"""
import json, importlib
out = {}
try:
    import torch
    out["torch"] = torch.__version__
    out["cuda_build"] = torch.version.cuda
    out["cuda"] = torch.cuda.is_available()
    out["gpus"] = torch.cuda.device_count() if out["cuda"] else 0
    out["gpu_names"] = [torch.cuda.get_device_name(i) for i in range(out["gpus"])]
    out["threads"] = torch.get_num_threads()
except Exception as exc:
    out["torch_error"] = f"{type(exc).__name__}: {exc}"
for mod in ("pytorch_lightning", "bitsandbytes", "torchao"):
    try:
        m = importlib.import_module(mod)
        out[mod] = getattr(m, "__version__", "installed")
    except Exception as exc:
        out[mod + "_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
print(json.dumps(out))
"""


def probe() -> dict[str, Any]:
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120)
        found = json.loads(done.stdout.strip().splitlines()[-1])
        return found if isinstance(found, dict) else {"torch_error": "probe failed: not a JSON object"}
    except (subprocess.SubprocessError, json.JSONDecodeError, IndexError, OSError) as exc:
        return {"torch_error": f"probe failed: {exc}"}


def _ninja_from_pip() -> str | None:
    try:
        import ninja

        return str(Path(ninja.BIN_DIR) / "ninja")
    except (ImportError, AttributeError):
        return None


CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def python_headers() -> Path | None:
    """Python.h, which C++ extensions (chapter 3) compile against; None when missing."""
    include = sysconfig.get_paths().get("include")
    header = Path(include) / "Python.h" if include else None
    return header if header is not None and header.exists() else None


def fix_for(what: str) -> str:
    """How to get `what` on this platform: one line a learner can act on."""
    linux = sys.platform.startswith("linux")
    mac = sys.platform == "darwin"
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    fixes = {
        "torch": f"pip install torch --index-url {CPU_INDEX}  "
        + _("(the small CPU-only build; for a GPU, the CUDA command from pytorch.org's Get started page)"),
        "cxx": (
            "sudo apt install build-essential  (Fedora: sudo dnf install gcc-c++)"
            if linux
            else "xcode-select --install"
            if mac
            else _("install the Visual Studio Build Tools (C++ workload)")
        ),
        "headers": (
            f"sudo apt install python{py}-dev  (Fedora: sudo dnf install python3-devel)"
            if linux
            else "xcode-select --install"
            if mac
            else _("reinstall Python with its development files")
        ),
        "ninja": "pip install ninja",
        "ccache": (
            "sudo apt install ccache  (Fedora: sudo dnf install ccache)"
            if linux
            else "brew install ccache"
            if mac
            else "conda install -c conda-forge ccache"
        )
        + "  "
        + _("(not on pip; torch's builds use it once it is on PATH)"),
        "nvcc": _("install the CUDA toolkit matching your torch build (only the CUDA kernel exercise needs it)"),
        "pytorch_lightning": "pip install pytorch-lightning",
        "bitsandbytes": "pip install bitsandbytes  " + _("(its 8-bit kernels need a CUDA GPU)"),
        "torchao": "pip install torchao  " + _("(chapter 11's quantize_ exercises; runs on CPU)"),
    }
    return fixes[what]


def doctor(console: Console, home: Path) -> int:
    info = probe()
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    nvcc = shutil.which("nvcc")
    ninja = shutil.which("ninja") or _ninja_from_pip()
    table = Table(title="tutor doctor", title_justify="left", show_header=False)
    table.add_column(_("what"))
    table.add_column(_("found"))

    def ok(flag: bool, text: str, fix: str = "") -> Text:
        """✓/✗, what was found, and (when missing) the fix. Plain Text: paths and error
        messages may hold square brackets that markup would eat."""
        line = Text.assemble(("✓ ", "green") if flag else ("✗ ", "red"), text)
        if not flag and fix:
            line.append("\n  " + _("fix: {fix}", fix=fix), style="yellow")
        return line

    table.add_row("Python", ok(sys.version_info >= (3, 10), f"{platform.python_version()} ({sys.executable})"))
    table.add_row(
        "torch",
        ok("torch" in info, info.get("torch") or info.get("torch_error", _("not importable")), fix_for("torch")),
    )
    gpus = int(info.get("gpus", 0))
    table.add_row(
        "CUDA",
        ok(
            bool(info.get("cuda")),
            _("{n} GPU(s)", n=gpus) + f" {', '.join(info.get('gpu_names', []))}"
            if info.get("cuda")
            else _("not available (torch built for CUDA {version})", version=info.get("cuda_build"))
            if info.get("cuda_build")
            else _("not available (CPU build of torch)"),
        ),
    )
    headers = python_headers()
    table.add_row(
        _("C++ compiler"), ok(bool(cxx), cxx or _("not found (chapter 3 needs g++ or clang++)"), fix_for("cxx"))
    )
    table.add_row(
        _("Python headers"),
        ok(
            headers is not None,
            str(headers) if headers else _("Python.h not found (chapter 3's extensions compile against it)"),
            fix_for("headers"),
        ),
    )
    table.add_row("ninja", ok(bool(ninja), ninja or _("not found (load_inline builds with it)"), fix_for("ninja")))
    ccache = shutil.which("ccache")
    table.add_row(
        "ccache",
        ok(
            bool(ccache),
            ccache or _("not found (optional: a C++ source built once before is then taken from its cache)"),
            fix_for("ccache"),
        ),
    )
    table.add_row(
        "nvcc",
        ok(
            bool(nvcc),
            nvcc or _("not found (only the CUDA kernel exercise needs it)"),
            fix_for("nvcc") if info.get("cuda") else "",
        ),
    )
    for mod, label in (
        ("pytorch_lightning", "Lightning"),
        ("bitsandbytes", "bitsandbytes"),
        ("torchao", "torchao"),
    ):
        if mod == "torchao" and mod not in info and mod + "_error" not in info:
            continue  # an older probe result that never asked about torchao
        table.add_row(
            label, ok(mod in info, info.get(mod) or info.get(mod + "_error", _("not importable")), fix_for(mod))
        )
    table.add_row(_("threads"), str(info.get("threads", "?")))
    table.add_row(_("your files"), str(home))
    console.print(table)

    course = load_course(lang=i18n.language())
    runnable = Table(title=_("what runs here"), title_justify="left")
    runnable.add_column(_("chapter"))
    runnable.add_column(_("runs here"), justify="right")
    runnable.add_column(_("needs what this machine lacks"))
    for c in course.chapters:
        missing = []
        n = 0
        for e in c.exercises:
            device, why = e.needs.device_here(gpus)
            can = "torch" in info and device is not None and (c.number != 3 or bool(cxx and ninja and headers))
            n += bool(can)
            if not can:
                why = needs_text(e.needs) if why else _("needs a C++ compiler, Python headers and ninja")
                missing.append(_("{id} ({why})", id=e.id, why=why))
        runnable.add_row(f"{c.number}. {c.title}", f"{n}/{len(c.exercises)}", _(", ").join(missing) or "—")
    console.print(runnable)
    return 0 if "torch" in info else 1


def cmd_doctor(args: argparse.Namespace, home: Path) -> int:
    from tutor.cli.common import console

    return doctor(console, home)
