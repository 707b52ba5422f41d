"""A checker whose task writes a file: `double(x)` saves the doubled values to saved.txt in
its working folder (chapter checkers save models, traces and programs the same way)."""

import ast
from pathlib import Path


def check(ctx):
    x = ctx.randn(3, 2)
    ctx.learner.double(x)
    saved = Path("saved.txt")
    ctx.expect(saved.exists(), "double() wrote no saved.txt")
    ctx.expect_equal("values", ast.literal_eval(saved.read_text()), (x * 2).tolist())
