"""Imports run one way: mrc_host (the protocol) <- topologies (the fabric)
<- faults (what goes wrong) <- lab (orchestration, analysis). A module may
import from its own layer and the ones below it, never from above: the
protocol core stays testable without a fabric, the fabric without a lab."""

import ast
from collections import Counter
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
    names = Counter(p.name for p in (Path(__file__).resolve().parents[1]).rglob("test_*.py"))
    assert not [n for n, k in names.items() if k > 1]


# ---- import cycles: within a layer too, imports run one way --------------------------------------
def modules_under(root: Path, tops: list[str]) -> dict[str, Path]:
    """Every module below `tops` by dotted name; a package by its __init__.py."""
    found = {}
    for top in tops:
        for path in (root / top).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports_of(name: str, modules: dict[str, Path], in_functions: bool, typing_only: bool = False) -> set[str]:
    """The modules of `modules` that importing `name` runs: each named module and the packages
    above it. Imports under `if TYPE_CHECKING:` never run and those inside functions run late:
    each counts only when asked for (a cycle through one stops nothing at import, but it is
    still a knot for a reader)."""
    def deepest(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    def walk(node: ast.AST):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not in_functions:
                continue
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test) and not typing_only:
                yield from (n for stmt in child.orelse for n in walk(ast.Module([stmt], [])))
                continue
            if isinstance(child, ast.Import):
                yield from (alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                yield from (f"{child.module}.{alias.name}" for alias in child.names)
            else:
                yield from walk(child)

    found = set()
    for dotted in walk(ast.parse(modules[name].read_text())):
        target = deepest(dotted)
        parts = target.split(".") if target else []
        found |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & modules.keys()
    return found - {name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of nodes that reach each other (each a cycle or several knotted together)."""
    def reach(start: str) -> set[str]:
        seen, todo = set(), list(graph.get(start, ()))
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
        return seen

    reaches = {node: reach(node) for node in graph}
    groups = {frozenset({n} | {m for m in reaches[n] if n in reaches.get(m, ())}) for n in graph if n in reaches[n]}
    return sorted(sorted(g) for g in groups)


def package_of(name: str, modules: dict[str, Path]) -> str:
    return name if modules[name].name == "__init__.py" else name.rpartition(".")[0]


def package_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Package -> the packages its modules import anywhere (inside functions too), leaving out a
    package's own parents and children: `lab` importing `lab.runners` is how packages nest."""
    graph: dict[str, set[str]] = {}
    for name in modules:
        here = package_of(name, modules)
        for other in {package_of(m, modules) for m in imports_of(name, modules, in_functions=True)}:
            if not (other == here or other.startswith(here + ".") or here.startswith(other + ".")):
                graph.setdefault(here, set()).add(other)
    return graph


def test_no_module_imports_itself_round_a_cycle():
    modules = modules_under(ROOT, LAYERS)
    assert cycles({name: imports_of(name, modules, in_functions=False) for name in modules}) == []


def test_no_module_cycle_even_through_imports_in_functions_or_for_typing():
    modules = modules_under(ROOT, LAYERS)
    assert cycles({name: imports_of(name, modules, in_functions=True, typing_only=True) for name in modules}) == []


def test_no_two_packages_import_each_other():
    assert cycles(package_graph(modules_under(ROOT, LAYERS))) == []


def test_the_cycle_scans_find_a_cycle(tmp_path):
    (tmp_path / "pkg" / "one").mkdir(parents=True)
    (tmp_path / "pkg" / "two").mkdir()
    for package in ("pkg", "pkg/one", "pkg/two"):
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "pkg" / "one" / "a.py").write_text("from pkg.one import b\n")
    (tmp_path / "pkg" / "one" / "b.py").write_text("import pkg.one.a\ndef f():\n    from pkg.two.c import x\n")
    (tmp_path / "pkg" / "two" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                                    "    from pkg.one.a import y\ndef g():\n    from pkg.one import a\n")
    modules = modules_under(tmp_path, ["pkg"])
    assert cycles({name: imports_of(name, modules, in_functions=False) for name in modules}) == [
        ["pkg.one.a", "pkg.one.b"]]
    assert cycles(package_graph(modules)) == [["pkg.one", "pkg.two"]]


# ---- shared code names no data plane ------------------------------------------------------------
DATAPLANE_PACKAGES = ("topologies.srv6", "topologies.openflow")
SHARED = LAYERS + ["bench", "exercises"]
# The modules outside the data-plane packages that may import one, and why.
MAY_IMPORT_A_DATA_PLANE = {
    "topologies/dataplanes.py": "the registry of data planes: the one door to them",
    "bench/un_engine_cost.py": "measures the srv6 routers' eBPF uN engine itself",
}


def dataplane_imports(path: Path) -> set[str]:
    """The data-plane modules `path` imports, at its top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found |= {n for n in names if n.startswith(tuple(p + "." for p in DATAPLANE_PACKAGES)) or n in DATAPLANE_PACKAGES}
    return found


def test_shared_code_imports_no_data_plane_package():
    """Every difference between the data planes goes through the DataPlane type
    (topologies/dataplane.py), resolved by the registry: code outside topologies/srv6/ and
    topologies/openflow/ names neither package."""
    offenders = {}
    for top in SHARED:
        for path in sorted((ROOT / top).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            if name.startswith(tuple(p.replace(".", "/") + "/" for p in DATAPLANE_PACKAGES)):
                continue
            imported = dataplane_imports(path)
            if imported and name not in MAY_IMPORT_A_DATA_PLANE:
                offenders[name] = sorted(imported)
    assert offenders == {}


def test_the_data_plane_scan_sees_every_import_form(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from topologies import srv6\nimport topologies.openflow.tables\n"
                      "def f():\n    from topologies.srv6.routing import x\nfrom topologies.fabric import y\n")
    assert dataplane_imports(module) == {"topologies.srv6", "topologies.openflow.tables",
                                         "topologies.srv6.routing", "topologies.srv6.routing.x"}
