"""The results panel in Chinese with figures a checker named itself (SVG snapshots at 80x24
and 120x36): a timing whose rows are the checker's sides (你的 / 循环, not 参考), a second
timing under the checker's label, and a memory figure; what the zh guides quote."""

from __future__ import annotations

from tutor.runner.protocol import FIGURE_LABELS, Verdict

from support.fakes import FakeRunner
from .test_snapshots import _hints_and_check
from .test_zh import SIZES, make_zh_app, plain_editor, zh_root  # noqa: F401  (fixtures)


def _timing(mine: float, ref: float, compares: str, sides: list[str]) -> dict:
    return {
        "learner_s": mine,
        "reference_s": ref,
        "speedup": ref / mine,
        "noisy": False,
        "rounds": 57,
        "compares": compares,
        "sides": sides,
    }


# As the zh checker of func-per-sample-grads reports it (`tutor --lang zh check --json`).
NAMED = Verdict(
    status="passed",
    reason="全部检查通过",
    figures={
        "time": _timing(0.0021, 0.0155, "你的代码 / 调用 64 次 backward() 的循环", ["你的", "循环"]),
        "reference_vs_loop": _timing(0.0019, 0.0152, "参考答案 / 同样调用 backward() 的循环", ["参考答案", "循环"]),
        "memory": {"learner_bytes": 3 * 2**20, "reference_bytes": 48 * 2**20, "sides": ["你的", "构造黑塞矩阵"]},
        FIGURE_LABELS: {"reference_vs_loop": "参考答案与循环对比"},
    },
    duration_s=14.4,
)


@SIZES
def test_zh_results_with_checker_named_figures(snap_compare, make_zh_app, size) -> None:  # noqa: F811
    app = make_zh_app("sigmoid", runner=FakeRunner([NAMED]))
    assert snap_compare(app, terminal_size=size, run_before=_hints_and_check(0))
