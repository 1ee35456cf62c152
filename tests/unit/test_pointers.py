"""Every pointer in code and docs leads somewhere in the repository: no
references to issue numbers or design notes that live outside it, and every
repository path a doc or docstring names in backticks exists."""

import re
import subprocess
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
