"""Every pointer in code and docs leads somewhere in the repository: no
references to issue numbers or design notes that live outside it, every
repository path a doc or docstring names in backticks exists, and every function,
class or setting a comment, docstring or doc cites by file and name is defined there."""

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = re.compile(r"\.\./shared|DESIGN\.md|STYLE\.md|\bissues? #?\d+\b", re.IGNORECASE)
REPO_PATH = re.compile(r"`((?:lab|topologies|mrc_host|faults|notebooks|docs|exercises|bench|tests)/[\w./-]*\w)")


def tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / n for n in names
            if n.endswith((".py", ".md", ".ipynb", ".sh", ".yaml", ".c", ".toml")) and (ROOT / n).is_file()
            and n != "tests/unit/test_pointers.py"]


def test_nothing_points_outside_the_repository():
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
            for p in tracked_text_files()
            for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if OUTSIDE.search(line)]
    assert hits == []


def test_every_repository_path_named_in_backticks_exists():
    missing = sorted({f"{p.relative_to(ROOT)}: {m}"
                      for p in tracked_text_files()
                      for m in REPO_PATH.findall(p.read_text(errors="replace"))
                      if not (ROOT / m).exists() and not list(ROOT.glob(m + "*"))})
    assert missing == []


# ---- `path/to/file.py name`: a comment, docstring or doc names a function, class or setting ------
CODE_DIRS = ("lab", "topologies", "faults", "mrc_host", "bench", "exercises")
_PY = r"((?:lab|topologies|faults|mrc_host|bench|exercises|notebooks|tests)/[\w/.-]*?\.py)"
_NAME = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?"
# the file, then the name: "lab/runners/bench.py run_steps", "...py's run_steps", "...py:Class"
FILE_THEN_NAME = re.compile(rf"(?<![\w/.-]){_PY}(?::|,? |`? `?|:`|'s `?)`?({_NAME})")
# the name, then the file: "`run_steps` (lab/runners/bench.py)", "run_steps in `lab/runners/bench.py`"
NAME_THEN_FILE = re.compile(rf"(`{_NAME}(?:\(\))?`|[A-Za-z_]\w*_\w*|[A-Z][a-z]+[A-Z]\w*)(?:\(\))? "
                            rf"(?:\(`?{_PY}(?=`?\))|in `?{_PY}\b)")


def defined_names(path: Path) -> set[str]:
    """What a module defines: functions, classes (and their methods and fields), assigned names."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names |= {f"{node.name}.{item.name}" for item in node.body
                      if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
            names |= {f"{node.name}.{item.target.id}" for item in node.body
                      if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def comments_and_docstrings(path: Path) -> list[str]:
    return [tok.string for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
            if tok.type == tokenize.COMMENT
            or (tok.type == tokenize.STRING and tok.string.lstrip("rbuRBU").startswith(('"""', "'''")))]


def citations(text: str, code_words: set[str]) -> list[tuple[str, str]]:
    """(file, name) for each citation in `text`. A word after a file is a citation only if it
    looks like code (an underscore, a capital) or names a function or class of the project:
    "lab/analysis/plots.py draws" is prose."""
    def looks_like_code(name: str) -> bool:
        head = name.split(".")[0]
        return "_" in head or any(c.isupper() for c in head) or head in code_words

    # lab/run.py's words are its commands ("lab/run.py bench"), not names
    found = [(f, n) for f, n in FILE_THEN_NAME.findall(text) if f != "lab/run.py" and looks_like_code(n)]
    for m in NAME_THEN_FILE.finditer(text):
        name = m.group(1).strip("`").removesuffix("()")
        capital = m.group(1).startswith("`") and any(c.isupper() for c in name)   # `PASSES`, not OpenFlow
        if "_" in name or capital or name.split(".")[0] in code_words:
            found.append((m.group(2) or m.group(3), name))
    return found


def stale_citations(root: Path, texts: dict[str, list[str]]) -> list[str]:
    """Each citation in `texts` (where -> its texts) whose file or name is not in `root`."""
    sources = {str(p.relative_to(root)): p for d in CODE_DIRS + ("tests",) for p in (root / d).rglob("*.py")}
    defined = {name: defined_names(path) for name, path in sources.items()}
    code_words = {node.name for name, path in sources.items() if not name.startswith("tests/")
                  for node in ast.walk(ast.parse(path.read_text()))
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return [f"{where}: {file} {name}"
            for where, chunks in texts.items() for text in chunks for file, name in citations(text, code_words)
            if not (name == Path(file).stem or name in defined.get(file, ()))]


def test_every_file_and_name_a_comment_or_doc_cites_exists():
    texts = {str(p.relative_to(ROOT)): comments_and_docstrings(p)
             for d in CODE_DIRS for p in sorted((ROOT / d).rglob("*.py"))}
    texts |= {str(p.relative_to(ROOT)): [p.read_text()] for p in sorted((ROOT / "docs").glob("*.md"))}
    assert stale_citations(ROOT, texts) == []


def test_the_citation_check_finds_a_stale_one(tmp_path):
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "a.py").write_text("def run_steps():\n    pass\nclass Bench:\n    def plan(self): ...\n")
    texts = {"doc": ["see lab/a.py run_steps and lab/a.py's Bench.plan; `plan_of` (lab/a.py)",
                     "lab/a.py draws (prose); `kinds` (lab/a.py) too; gone_name in lab/a.py; lab/b.py run_steps"]}
    assert sorted(stale_citations(tmp_path, texts)) == ["doc: lab/a.py gone_name", "doc: lab/a.py plan_of",
                                                        "doc: lab/b.py run_steps"]
