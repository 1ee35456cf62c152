"""Exercise 06's exact answer (exercises/solutions/06-switch-down/exact_capacity.py), the one its grader holds the
student's share_kept to, against the paper row's own capacity figures (lab/paper/switch_faults.py) and
the reference solution."""

import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest

from lab.paper.switch_faults import T0_DOWN, T1_DOWN, capacity_left, fabric_capacity_left
from topologies.fabric import DEFAULT_FABRIC

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


exact = load(EXERCISES / "solutions" / "06-switch-down" / "exact_capacity.py")
reference = load(EXERCISES / "solutions" / "06-switch-down" / "prediction.py")
FABRICS = [DEFAULT_FABRIC, replace(DEFAULT_FABRIC, spines=1), replace(DEFAULT_FABRIC, planes=4, spines=4),
           replace(DEFAULT_FABRIC, planes=2, spines=3, hosts_per_rack=5)]
HOW = {"T0": T0_DOWN, "T1": T1_DOWN}


def test_the_paper_row_and_its_numbers():
    # one plane of eight; the plane's other T1 carries host 0's whole link
    assert exact.share_kept("T0", 8, 2, 1) == pytest.approx(7 / 8)
    assert exact.share_kept("T1", 8, 2, 1) == 1
    # the default fabric rack to rack: one T1 of 16 gone
    assert exact.share_kept("T1", 8, 2, 2) == pytest.approx(15 / 16)


@pytest.mark.parametrize("spec", FABRICS)
@pytest.mark.parametrize("switch", ["T0", "T1"])
def test_one_pair_is_the_paper_rows_capacity_left(spec, switch):
    assert float(exact.share_kept(switch, spec.planes, spec.spines, 1)) == pytest.approx(
        capacity_left(spec, HOW[switch]))


@pytest.mark.parametrize("spec", [f for f in FABRICS if f.hosts_per_rack >= f.spines])
@pytest.mark.parametrize("switch", ["T0", "T1"])
def test_a_whole_rack_fills_the_fabrics_cross_rack_capacity(spec, switch):
    # as many test hosts as uplinks or more: every uplink is busy, so the test loses what the fabric does
    assert float(exact.share_kept(switch, spec.planes, spec.spines, spec.hosts_per_rack)) == pytest.approx(
        fabric_capacity_left(spec, HOW[switch]))


@pytest.mark.parametrize("case", [(s, p, t, n) for s in ("T0", "T1") for p in (1, 2, 8) for t in (1, 2, 3, 5)
                                  for n in (1, 2, 4, 7)])
def test_the_reference_solution_is_exact(case):
    assert reference.share_kept(*case) == pytest.approx(float(exact.share_kept(*case)), abs=1e-12)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        exact.share_kept("T2", 8, 2, 1)
    with pytest.raises(ValueError):
        exact.share_kept("T1", 8, 0, 1)
