"""A known-wrong answer to exercise 08: another seed's run copied (seed 3: the link t0p1r0-t1p1s1 gray),
every answer a constant read off that run's figures."""

COPIED_LINKS = {"t0p1r0-t1p1s1"}
COPIED_ROUTES = {(0, 1, 1), (1, 1, 1)}


def gray_links(records: list, fabric: dict) -> set:
    return set(COPIED_LINKS) if records else set()


def routes_denied(links: list, fabric: dict) -> set:
    return set(COPIED_ROUTES)


def state_without_mapper(links: list, fabric: dict) -> str:
    return "ASSUMED_BAD"


FIRST_TO_ACT = "agents"

REASONING = """Copied."""
