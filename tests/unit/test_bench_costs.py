"""The data planes' cost figures of `bench --scale` (every data plane): medians over the
alternating checks, the slowest build, and no pass when a check lost packets."""

from lab.runners.bench import Figure
from lab.runners.bench_scale import cost_figures


def check(plane: str, us: float, build_s: float = 5.0, lost: int = 0) -> dict:
    return {"dataplane": plane, "lost": lost,
            "build_verify": Figure(f"build + verify ({plane})", f"{build_s} s", "", True,
                                   {"build_s": build_s, "verify_s": 1.0}),
            "stream": {"cpu_us_per_packet": us, "cpu_mean_pct": 50.0, "load": 0.9}}


def test_the_ratio_is_of_medians_and_one_outlier_does_not_decide_it():
    figures = cost_figures([check("srv6", 160), check("openflow", 190), check("srv6", 170, build_s=7.0),
                            check("openflow", 550), check("srv6", 90), check("openflow", 200)])
    builds, ratio = figures[:2], figures[2]
    assert [f.raw["build_s"] for f in builds] == [7.0, 5.0]          # each plane's slowest check
    assert ratio.value.startswith("0.80 (160 us vs 200 us") and ratio.ok is False
    assert ratio.raw["per_packet_us"] == {"srv6": [160, 170, 90], "openflow": [190, 550, 200]}


def test_a_cheap_srv6_passes_unless_a_check_lost_packets():
    cheap = [check("srv6", 80), check("openflow", 200)]
    assert cost_figures(cheap)[-1].ok is True
    assert cost_figures([check("srv6", 80, lost=3), check("openflow", 200)])[-1].ok is False


def test_one_data_plane_gives_only_its_build_figure():
    assert [f.name for f in cost_figures([check("srv6", 80)])] == ["build + verify (srv6)"]
