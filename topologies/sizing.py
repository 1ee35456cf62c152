"""Fabric-size calculator: how many NICs a switch radix reaches, multi-plane
versus single-plane.

A folded Clos of k tiers built from radix-r switches reaches
2 * (r/2)**k hosts; it needs (2k - 1) * N / r switches for N hosts (every tier
but the top has 2N/r switches, the top N/r).

Multi-plane: a switch of radix R at the per-plane port speed (51.2 Tb/s =
512 x 100G) and a NIC split into P ports, one per plane. Each plane is its
own two-tier fabric of R**2/2 NICs, so the NIC count does not depend on P;
the switch count is P times one plane.
Single-plane: the same switch at the full NIC speed has radix R / P
(512 x 100G = 64 x 800G) and needs more tiers for the same NIC count.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


class SizingError(ValueError):
    pass


def clos_hosts(radix: int, tiers: int) -> int:
    return 2 * (radix // 2) ** tiers


def clos_switches(radix: int, tiers: int, hosts: int) -> int:
    leaves = -(-2 * hosts // radix)  # ceil(2N / r)
    top = -(-hosts // radix)
    return (tiers - 1) * leaves + top


def tiers_needed(radix: int, hosts: int) -> int:
    tiers = 1
    while clos_hosts(radix, tiers) < hosts:
        tiers += 1
    return tiers


@dataclass(frozen=True)
class FabricSize:
    radix: int
    planes: int
    nics: int  # NICs reachable by the multi-plane fabric in two tiers
    tiers: int
    t0_per_plane: int
    t1_per_plane: int
    switches: int
    switches_per_nic: float
    single_plane_radix: int
    single_plane_nics_2_tiers: int
    single_plane_nics_3_tiers: int
    single_plane_tiers: int  # tiers a single-plane fabric needs for `nics`
    single_plane_switches: int

    def to_dict(self) -> dict:
        return asdict(self)


def fabric_size(radix: int, planes: int) -> FabricSize:
    """Figures for a radix-`radix` switch (ports at per-plane speed) and
    NICs split into `planes` ports."""
    if radix < 2 or radix % 2:
        raise SizingError(f"radix must be an even number >= 2, got {radix}")
    if planes < 1 or radix % planes:
        raise SizingError(f"planes must divide the radix ({radix}), got {planes}")
    single_radix = radix // planes
    if single_radix < 2 or single_radix % 2:
        raise SizingError(
            f"radix / planes = {single_radix}: the single-plane switch needs an even radix >= 2"
        )
    nics = clos_hosts(radix, 2)
    per_plane = clos_switches(radix, 2, nics)
    single_tiers = tiers_needed(single_radix, nics)
    return FabricSize(
        radix=radix,
        planes=planes,
        nics=nics,
        tiers=2,
        t0_per_plane=radix,
        t1_per_plane=radix // 2,
        switches=planes * per_plane,
        switches_per_nic=planes * per_plane / nics,
        single_plane_radix=single_radix,
        single_plane_nics_2_tiers=clos_hosts(single_radix, 2),
        single_plane_nics_3_tiers=clos_hosts(single_radix, 3),
        single_plane_tiers=single_tiers,
        single_plane_switches=clos_switches(single_radix, single_tiers, nics),
    )
