"""A known-wrong answer to exercise 06: the exact answers of another seed's cases (seed 1), looked up,
and the two measured cases' shares guessed; anything else gets 1 (nothing lost)."""

COPIED = {("T0", 4, 4, 2): 3 / 4, ("T1", 8, 1, 1): 7 / 8, ("T1", 6, 1, 2): 5 / 6, ("T1", 8, 1, 5): 7 / 8,
          ("T1", 5, 2, 3): 9 / 10, ("T1", 3, 3, 2): 1.0, ("T1", 7, 4, 3): 1.0,
          ("T0", 8, 2, 1): 7 / 8, ("T1", 8, 2, 1): 1.0, ("T1", 8, 2, 2): 15 / 16}


def share_kept(switch: str, planes: int, t1s_per_plane: int, pairs: int) -> float:
    return COPIED.get((switch, planes, t1s_per_plane, pairs), 1.0)


REASONING = """Copied."""
