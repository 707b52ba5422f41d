"""The learner's #include lines precompiled once for load_inline builds (prelude_pch.py)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tutor.runner import prelude_pch

MAIN = """\
// my relu
#include <ATen/ATen.h>

#include <torch/csrc/Exceptions.h>   // for the bindings
at::Tensor relu(const at::Tensor& x) { return x; }
#include <vector>
"""


def test_leading_includes_stop_at_the_first_line_of_code():
    assert prelude_pch.leading_includes(MAIN) == (
        "#include <ATen/ATen.h>\n#include <torch/csrc/Exceptions.h>   // for the bindings\n"
    )


def test_no_leading_includes_no_header():
    assert prelude_pch.leading_includes("int f();\n#include <vector>\n") == ""
    assert prelude_pch.leading_includes("") == ""


def test_a_quoted_include_ends_the_run():
    # found relative to main.cpp's own folder: the prelude, elsewhere, would find another file
    assert prelude_pch.leading_includes('#include <vector>\n#include "mine.h"\n#include <string>\n') == (
        "#include <vector>\n"
    )


def test_a_conditional_ends_the_run():
    assert prelude_pch.leading_includes("#include <vector>\n#ifdef X\n#include <string>\n#endif\n") == (
        "#include <vector>\n"
    )


def test_the_prelude_goes_on_the_cflags_line_only():
    ninja = "cflags = -O2 -fPIC\npost_cflags = \ncuda_cflags = -O3\n"
    out = prelude_pch.with_prelude(ninja, Path("/c/p q/prelude.h"), ccache=False)
    assert out.splitlines()[0] == "cflags = -O2 -fPIC -include '/c/p q/prelude.h'"
    assert out.splitlines()[1:] == ninja.splitlines()[1:]
    assert prelude_pch.with_prelude(ninja, Path("/p.h"), ccache=True).splitlines()[0].endswith("-fpch-preprocess")


def test_the_wrapper_is_left_out_of_the_header_build():
    assert prelude_pch._plain_compiler("ccache c++") == ["c++"]
    assert prelude_pch._plain_compiler("/usr/bin/sccache /usr/bin/g++") == ["/usr/bin/g++"]
    assert prelude_pch._plain_compiler("c++") == ["c++"]


def _fake_compiler(tmp_path: Path, fail: bool = False) -> Path:
    """A 'compiler' that writes its -o file and counts its calls."""
    script = tmp_path / "fakecxx"
    body = (
        "exit 1" if fail else 'out=""; while [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done; echo pch > "$out"'
    )
    script.write_text(f'#!/bin/sh\necho x >> "{tmp_path}/calls"\n{body}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def _build_dir(tmp_path: Path, name: str, cxx: Path, source: str = MAIN) -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "main.cpp").write_text(source)
    (d / "build.ninja").write_text(
        f"cxx = ccache {cxx}\ncflags = -DTORCH_EXTENSION_NAME={name} -O2 -fPIC\n"
        f"build main.o: compile {d / 'main.cpp'}\n"
    )
    return d


def _calls(tmp_path: Path) -> int:
    try:
        return len((tmp_path / "calls").read_text().split())
    except OSError:
        return 0


@pytest.fixture
def batons():
    pytest.importorskip("torch")
    from tutor.runner import build_locks as batons

    batons.install()


def test_one_header_serves_every_extension_with_the_same_includes(tmp_path, batons):
    cxx = _fake_compiler(tmp_path)
    root = tmp_path / "pch"
    first = prelude_pch.header_for(str(_build_dir(tmp_path, "a", cxx)), root)
    again = prelude_pch.header_for(str(_build_dir(tmp_path, "b_ref", cxx)), root)  # another name, same flags
    assert first is not None and first == again
    assert _calls(tmp_path) == 1
    assert first.read_text() == prelude_pch.leading_includes(MAIN)
    assert Path(str(first) + ".gch").exists()
    other = prelude_pch.header_for(str(_build_dir(tmp_path, "c", cxx, "#include <vector>\nint f();\n")), root)
    assert other is not None and other != first and _calls(tmp_path) == 2


def test_a_header_that_does_not_compile_is_not_used_nor_retried_at_once(tmp_path, batons):
    cxx = _fake_compiler(tmp_path, fail=True)
    root = tmp_path / "pch"
    assert prelude_pch.header_for(str(_build_dir(tmp_path, "a", cxx)), root) is None
    assert prelude_pch.header_for(str(_build_dir(tmp_path, "b", cxx)), root) is None
    assert _calls(tmp_path) == 1
    (failed,) = root.glob("*/failed")
    old = failed.stat().st_mtime - prelude_pch.RETRY_S - 1
    os.utime(failed, (old, old))
    assert prelude_pch.header_for(str(_build_dir(tmp_path, "c", cxx)), root) is None
    assert _calls(tmp_path) == 2


def test_no_includes_no_header_and_no_compiler_call(tmp_path, batons):
    cxx = _fake_compiler(tmp_path)
    d = _build_dir(tmp_path, "a", cxx, "int f() { return 1; }\n")
    assert prelude_pch.header_for(str(d), tmp_path / "pch") is None
    assert _calls(tmp_path) == 0


def test_only_the_most_recently_used_headers_are_kept(tmp_path, batons):
    cxx = _fake_compiler(tmp_path)
    root = tmp_path / "pch"
    headers = []
    for i in range(prelude_pch.KEEP + 2):
        d = _build_dir(tmp_path, f"e{i}", cxx, f"#include <h{i}.h>\nint f();\n")
        headers.append(prelude_pch.header_for(str(d), root))
        used = headers[-1].parent / "used"  # type: ignore[union-attr]
        os.utime(used, (1000.0 + i, 1000.0 + i))  # strictly increasing, whatever the clock's grain
    kept = sorted(p.name for p in root.iterdir())
    assert len(kept) == prelude_pch.KEEP
    assert sorted(h.parent.name for h in headers[-prelude_pch.KEEP :]) == kept  # type: ignore[union-attr]


@pytest.mark.slow
def test_a_real_build_uses_the_header_and_an_edit_reuses_it(tmp_path, monkeypatch):
    """load_inline with gcc: the header is built once, main.cpp is compiled with it, and the
    extension loads; a second build of edited code finds the same header."""
    pytest.importorskip("torch")
    if shutil.which("c++") is None:
        pytest.skip("no C++ compiler")
    from torch.utils import cpp_extension

    from tutor.runner import build_locks as batons

    batons.install()
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "ext"))
    monkeypatch.delenv("TUTOR_NO_PCH", raising=False)
    monkeypatch.setattr(cpp_extension, "_run_ninja_build", cpp_extension._run_ninja_build)
    prelude_pch.patch(cpp_extension)
    for k in (1, 2):
        source = f"#include <vector>\n#include <numeric>\nint tutor_pch_test_{k}() {{ std::vector<int> v{{{k}}}; return v[0]; }}\n"
        cpp_extension.load_inline(
            name=f"tutor_pch_test_{k}", cpp_sources=source, is_python_module=False, no_implicit_headers=True
        )
        build = tmp_path / "ext" / f"tutor_pch_test_{k}"
        assert "-include " in (build / "build.ninja").read_text()
        # gcc lists a header it read as text among main.o's dependencies, not one it took precompiled
        deps = subprocess.run(["ninja", "-t", "deps"], cwd=build, capture_output=True, text=True, check=True).stdout
        assert "main.cpp" in deps and "prelude.h" not in deps, deps
    (folder,) = (tmp_path / "ext" / "tutor_pch").iterdir()
    assert (folder / "prelude.h.gch").exists()
    assert (folder / "prelude.h").read_text() == "#include <vector>\n#include <numeric>\n"


CODE = """
#include <ATen/ATen.h>

// a helper: not bound
static float clip(float v) { return v < 0.0f ? 0.0f : v; }

at::Tensor relu(const at::Tensor& x /* { not a body */) {
    const char* brace = "}{";
    return x;
}

std::vector<at::Tensor>
split_rows(const at::Tensor& x, int64_t every = 2) {
    return {x};
}
"""


def test_a_declaration_is_the_definition_up_to_its_body():
    assert prelude_pch.declaration(CODE, "relu") == "at::Tensor relu(const at::Tensor& x /* { not a body */)\n;"
    assert prelude_pch.declaration(CODE, "split_rows") == (
        "std::vector<at::Tensor>\nsplit_rows(const at::Tensor& x, int64_t every = 2)\n;"
    )


@pytest.mark.parametrize(
    "code",
    [
        "static at::Tensor f(const at::Tensor& x) { return x; }",  # internal: another file cannot call it
        "inline at::Tensor f(const at::Tensor& x) { return x; }",
        "template <typename T> T f(T x) { return x; }",
        "namespace ops { at::Tensor f(const at::Tensor& x) { return x; } }",
        "auto f(const at::Tensor& x) { return x; }",  # deduced return type
        "int f(int x) { return x; }\ndouble f(double x) { return x; }",  # overloaded
        "at::Tensor g(const at::Tensor& x) { return x; }",  # not there
    ],
)
def test_no_declaration_where_another_file_could_not_call_it(code):
    assert prelude_pch.declaration(code, "f") is None


def _generated(tmp_path: Path, source: str, name: str = "ext") -> Path:
    """A build folder as load_inline leaves it for functions=["relu"]."""
    d = tmp_path / name
    d.mkdir()
    main = d / "main.cpp"
    main.write_text(
        source
        + '\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\nm.def("relu", torch::wrap_pybind_function(relu), "relu");\n}'
    )
    (d / "build.ninja").write_text(
        f"cxx = c++\ncflags = -DTORCH_EXTENSION_NAME={name}_v3 -O2\n\nbuild main.o: compile {main}\n\n"
        f"build {name}.so: link main.o\n\ndefault {name}.so\n"
    )
    return d


def test_bindings_after_the_code_get_a_file_of_their_own(tmp_path):
    source = "\n#include <ATen/ATen.h>\n\nat::Tensor relu(const at::Tensor& x) {\n    return x;\n}\n\n#include <torch/csrc/Exceptions.h>"
    d = _generated(tmp_path, source)
    assert prelude_pch.split_bindings(str(d))
    ninja = (d / "build.ninja").read_text()
    assert f"build main.o: compile {d / 'split' / 'main.cpp'}" in ninja
    assert f"build bindings.o: compile {d / 'split' / 'bindings.cpp'}" in ninja
    assert "build ext.so: link main.o bindings.o init.o" in ninja
    # the bindings under a fixed name, so that load_inline's renaming (ext_v1, ...) leaves them built;
    # init.cpp forwards the entry point of the day to them
    assert "\n  cflags = -O2\n" in ninja.split("build bindings.o", 1)[1]
    assert "PYBIND11_MODULE(tutor_split_bindings, m) {" in (d / "split" / "bindings.cpp").read_text()
    assert "TUTOR_CAT(PyInit_, TORCH_EXTENSION_NAME)" in (d / "split" / "init.cpp").read_text()
    # init.cpp is compiled without the prelude (it needs Python.h alone)
    with_header = prelude_pch.with_prelude(ninja, Path("/p/prelude.h"), ccache=False)
    assert with_header.count("-include /p/prelude.h") == 2  # the file's flags and the bindings' own
    assert "  cflags = $cflags_tutor_split_bindings\n" in with_header
    assert "cflags_tutor_split_bindings = -DTORCH_EXTENSION_NAME=ext_v3 -O2\n" in with_header
    code = (d / "split" / "main.cpp").read_text()
    # the learner's lines keep their numbers (errors are reported by them), without pybind11
    assert code.splitlines() == (d / "main.cpp").read_text().splitlines()[: len(code.splitlines())]
    assert "Exceptions.h" not in code and "PYBIND11_MODULE" not in code
    bindings = (d / "split" / "bindings.cpp").read_text()
    assert bindings.startswith("#include <ATen/ATen.h>\n#include <torch/csrc/Exceptions.h>\n")
    assert "at::Tensor relu(const at::Tensor& x)\n;" in bindings and "return x" not in bindings
    # an edit of the body leaves the bindings file as it was (ninja does not rebuild it)
    before = (d / "split" / "bindings.cpp").stat().st_mtime_ns
    os.utime(d / "split" / "bindings.cpp", ns=(before - 10**9, before - 10**9))
    edited = (d / "main.cpp").read_text().replace("return x;", "return x.clone();")
    (d / "main.cpp").write_text(edited)
    (d / "build.ninja").write_text(
        f"cxx = c++\ncflags = -O2\n\nbuild main.o: compile {d / 'main.cpp'}\n\nbuild ext.so: link main.o\n"
    )
    assert prelude_pch.split_bindings(str(d))
    assert (d / "split" / "bindings.cpp").stat().st_mtime_ns == before - 10**9
    assert "x.clone()" in (d / "split" / "main.cpp").read_text()


@pytest.mark.parametrize(
    "source",
    [
        "\n#include <ATen/ATen.h>\n#include <torch/csrc/Exceptions.h>\n\nat::Tensor relu(const at::Tensor& x) { return x; }",
        "\n#include <ATen/ATen.h>\nstatic at::Tensor relu(const at::Tensor& x) { return x; }\n#include <torch/csrc/Exceptions.h>",
    ],
)
def test_otherwise_the_build_stays_as_torch_wrote_it(tmp_path, source):
    d = _generated(tmp_path, source)
    ninja = (d / "build.ninja").read_text()
    assert not prelude_pch.split_bindings(str(d))
    assert (d / "build.ninja").read_text() == ninja


def test_extensions_with_the_same_bindings_link_one_object(tmp_path, batons):
    cxx = _fake_compiler(tmp_path)
    source = "\n#include <ATen/ATen.h>\n\nat::Tensor relu(const at::Tensor& x) {\n    return x;\n}\n\n#include <torch/csrc/Exceptions.h>"
    root = tmp_path / "pch"
    objects = []
    for name, body in (("mine", "return x;"), ("mine_ref", "return x.clone();")):  # other code, same signature
        d = _generated(tmp_path, source.replace("return x;", body), name)
        (d / "build.ninja").write_text((d / "build.ninja").read_text().replace("cxx = c++", f"cxx = {cxx}"))
        assert prelude_pch.split_bindings(str(d))
        prelude_pch.share_bindings(str(d), root)
        ninja = (d / "build.ninja").read_text()
        assert "build bindings.o" not in ninja and "build main.o: compile" in ninja
        (link,) = [line for line in ninja.splitlines() if ": link " in line]
        objects.append(link.split()[4])
        assert link.split()[3] == "main.o" and link.split()[5] == "init.o"
    assert objects[0] == objects[1] and Path(objects[0]).exists()
    assert _calls(tmp_path) == 1
    # a header whose `objects` folder holds no precompiled header is never pruned as one
    prelude_pch._prune(root, spare=tmp_path, keep=1)
    assert Path(objects[0]).exists()


def test_a_header_build_stopped_with_its_run_is_not_restarted_by_the_next(tmp_path, batons):
    # a killed run leaves its partial header behind; on a busy machine the next would be killed too
    cxx = _fake_compiler(tmp_path)
    root = tmp_path / "pch"
    d = _build_dir(tmp_path, "a", cxx)
    assert prelude_pch.header_for(str(d), root) is not None
    (folder,) = root.iterdir()
    (folder / "prelude.h.gch").rename(folder / "prelude.h.gch.12345")
    assert prelude_pch.header_for(str(_build_dir(tmp_path, "b", cxx)), root) is None
    assert (folder / "failed").exists() and not list(folder.glob("prelude.h.gch*"))
    assert _calls(tmp_path) == 1


def test_a_header_over_its_budget_is_given_up(tmp_path, batons, monkeypatch):
    slow = tmp_path / "slowcxx"
    slow.write_text("#!/bin/sh\nsleep 5\n")
    slow.chmod(slow.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(prelude_pch, "BUDGET_S", 0.5)
    root = tmp_path / "pch"
    assert prelude_pch.header_for(str(_build_dir(tmp_path, "a", slow)), root) is None
    (failed,) = root.glob("*/failed")
    assert "longer than" in failed.read_text()


def test_a_comment_above_the_function_stays_out_of_its_declaration():
    # an edit there must not change the bindings file (and rebuild its object)
    code = "#include <ATen/ATen.h>\n\n// edit 3\n/* more */\nat::Tensor relu(const at::Tensor& x) { return x; }\n"
    assert prelude_pch.declaration(code, "relu") == "at::Tensor relu(const at::Tensor& x)\n;"
