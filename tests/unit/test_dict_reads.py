"""Records are typed: lab/ reads a record's fields as attributes, and `.get("...")` on a dict is
left to parsing what comes from outside (scenario YAML before validation, bpftool's JSON,
environment variables, the agents' and mappers' lines, the agents' counters) and the few
file readers that turn JSON into a record. The count may only go down: a new `.get("` in
lab/ is a record that should be typed, or a parse that belongs behind its file's reader."""

import re
from pathlib import Path

LAB = Path(__file__).resolve().parents[2] / "lab"
MOST_DICT_GETS = 19          # lines of lab/ with a `.get("` call (what `grep -rn '\.get("' lab` counts)
DICT_GET = re.compile(r'\.get\("')


def lines_with_dict_gets(root: Path) -> list[str]:
    """"path:line: text" of every line of a .py file under `root` holding a `.get("` call."""
    return [f"{path.relative_to(root)}:{n}: {line.strip()}"
            for path in sorted(root.rglob("*.py"))
            for n, line in enumerate(path.read_text().splitlines(), 1) if DICT_GET.search(line)]


def test_lab_reads_records_as_attributes_not_with_dict_get():
    found = lines_with_dict_gets(LAB)
    assert len(found) <= MOST_DICT_GETS, "\n".join(found)


def test_the_count_sees_every_line_with_a_dict_get(tmp_path):
    (tmp_path / "a.py").write_text('x = d.get("k")\ny = d["k"]\nz = d.get("a") or d.get("b")\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("w = d.get('single quotes are spelled the other way')\n"
                                           'v = os.environ.get("HOME")\n')
    (tmp_path / "notes.txt").write_text('d.get("not python")\n')
    assert lines_with_dict_gets(tmp_path) == ['a.py:1: x = d.get("k")', 'a.py:3: z = d.get("a") or d.get("b")',
                                              'sub/b.py:2: v = os.environ.get("HOME")']
