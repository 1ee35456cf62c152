"""The lab's code stays readable a piece at a time: no module over MAX_MODULE_LINES lines and no
function or method over MAX_FUNCTION_LINES (its `def` line to its last, nested functions
included), in every package of code (tests/ is not held to it). A module or function that
grows past a limit is split along a seam of its own (one job per module), not cut at the line."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = ("mrc_host", "topologies", "faults", "lab", "bench", "exercises")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60


def code_files(root: Path = ROOT, tops=CODE) -> list[Path]:
    return sorted(p for top in tops for p in (root / top).rglob("*.py"))


def long_modules(paths: list[Path], root: Path = ROOT) -> dict[str, int]:
    lengths = {str(p.relative_to(root)): len(p.read_text().splitlines()) for p in paths}
    return {name: n for name, n in lengths.items() if n > MAX_MODULE_LINES}


def long_functions(paths: list[Path], root: Path = ROOT) -> dict[str, int]:
    found = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found[f"{path.relative_to(root)}:{node.lineno} {node.name}"] = lines
    return found


def test_no_module_is_longer_than_the_limit():
    assert long_modules(code_files()) == {}


def test_no_function_is_longer_than_the_limit():
    assert long_functions(code_files()) == {}


def test_the_scans_find_a_long_module_and_a_long_method(tmp_path):
    (tmp_path / "pkg").mkdir()
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "pkg" / "long.py").write_text(f"class C:\n    def m(self):\n{body}\n" + "\n" * MAX_MODULE_LINES)
    (tmp_path / "pkg" / "short.py").write_text("def f():\n    return 1\n")
    paths = code_files(tmp_path, ("pkg",))
    assert long_modules(paths, tmp_path) == {"pkg/long.py": MAX_FUNCTION_LINES + 2 + MAX_MODULE_LINES}
    assert long_functions(paths, tmp_path) == {"pkg/long.py:2 m": MAX_FUNCTION_LINES + 1}
