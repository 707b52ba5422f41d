"""The layout's import contracts (issues 19 and 26), on grimp's graph of every import in
`tutor/`: top-level, inside functions (lazy) and under `if TYPE_CHECKING:` alike.

- no import circles between tutor's modules;
- the core (the learning rules and what they stand on) imports neither Textual nor torch, not
  even through another module;
- Textual is imported only in tutor/ui;
- the UI never reaches torch, through any chain of imports.
"""

from __future__ import annotations

from functools import cache

import grimp
import pytest

# The learning rules and the plain-Python modules every front end builds on.
CORE = (
    "tutor.session",
    "tutor.watch_session",
    "tutor.status",
    "tutor.steps",
    "tutor.course",
    "tutor.progress",
    "tutor.workspace",
    "tutor.editor_file",
    "tutor.formatting",
    "tutor.i18n",
    "tutor.runner.protocol",
    "tutor.runner.client",
)


@cache
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("tutor", include_external_packages=True, exclude_type_checking_imports=False)


def ours() -> list[str]:
    return sorted(m for m in graph().modules if m == "tutor" or m.startswith("tutor."))


def test_the_graph_sees_lazy_and_type_checking_imports() -> None:
    """Guards the contracts below: a graph of top-level imports only would pass them vacuously."""
    g = graph()
    assert "tutor.ui.app" in g.find_modules_directly_imported_by("tutor.cli.learn")  # inside cmd_start
    assert "tutor.runner.client" in g.find_modules_directly_imported_by("tutor.ui.host")  # TYPE_CHECKING


def test_no_import_circles_in_tutor() -> None:
    g = graph()
    edges = {m: sorted(x for x in g.find_modules_directly_imported_by(m) if x.startswith("tutor.")) for m in ours()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def dfs(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                dfs(nxt, stack + [nxt])
        state[node] = 2

    for node in edges:
        if node not in state:
            dfs(node, [node])
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c) for c in cycles[:5])


@pytest.mark.parametrize("module", CORE)
@pytest.mark.parametrize("heavy", ["textual", "torch"])
def test_the_core_imports_neither_textual_nor_torch(module: str, heavy: str) -> None:
    chain = graph().find_shortest_chain(importer=module, imported=heavy)
    assert chain is None, " -> ".join(chain or ())


def test_only_the_ui_imports_textual() -> None:
    g = graph()
    found = [m for m in ours() if not m.startswith("tutor.ui") and "textual" in g.find_modules_directly_imported_by(m)]
    assert not found, found


def test_the_ui_never_reaches_torch() -> None:
    g = graph()
    chains = [g.find_shortest_chain(importer=m, imported="torch") for m in ours() if m.startswith("tutor.ui")]
    assert not any(chains), [" -> ".join(c) for c in chains if c]
