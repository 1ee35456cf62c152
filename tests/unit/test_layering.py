"""Imports run one way: mrc_host (the protocol) <- topologies (the fabric)
<- faults (what goes wrong) <- lab (orchestration, analysis). A module may
import from its own layer and the ones below it, never from above: the
protocol core stays testable without a fabric, the fabric without a lab."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["mrc_host", "topologies", "faults", "lab"]


def imported_packages(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("layer", LAYERS[:-1])
def test_no_import_from_a_layer_above(layer):
    above = set(LAYERS[LAYERS.index(layer) + 1:])
    offenders = {str(p.relative_to(ROOT)): sorted(imported_packages(p) & above)
                 for p in sorted((ROOT / layer).rglob("*.py"))}
    assert {p: bad for p, bad in offenders.items() if bad} == {}


def test_the_scan_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from lab.plumbing.cleanup import clean\n    import faults.model\n")
    assert imported_packages(module) == {"lab", "faults"}


def test_no_two_test_files_share_a_name():
    """pytest imports test modules by basename (no packages under tests/): two files of one
    name in unit/ and integration/ stop the whole suite at collection."""
    from collections import Counter
    from pathlib import Path

    names = Counter(p.name for p in (Path(__file__).resolve().parents[1]).rglob("test_*.py"))
    assert not [n for n, k in names.items() if k > 1]
