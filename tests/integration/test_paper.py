"""One real row of `lab/run.py paper` (root, about 25 s): NIC links taken down one by one and
together under an MRC bandwidth test (Fig. 9c/9d), on the default fabric, srv6."""

from lab.runners import paper


def test_links_down_row_on_a_real_fabric(tmp_path, no_leftovers):
    rows = list(paper.Paper(quick=True, root=tmp_path, say=lambda text: None).links_row())
    assert len(rows) == 1
    row = rows[0]
    runs = row.raw["runs"]
    assert set(runs) == {paper.ONE_BY_ONE, paper.TOGETHER}
    assert all(r["verified"] and not r["error"] for r in runs.values()), row.trust_reason
    shares = row.raw["shares"]
    # every planned phase was measured: clean, 1..4 links down, clean again; clean, 4 down, clean
    assert len(shares[paper.ONE_BY_ONE]) == paper.LINKS_DOWN + 2, row.lab
    assert len(shares[paper.TOGETHER]) == 3, row.lab
    assert f"{paper.LINKS_DOWN} down" in row.lab[f"MRC, {paper.TOGETHER}"]
    # with the links down MRC kept sending: no phase stalled
    assert min(min(s) for s in shares.values()) > 0.3, row.lab
    if row.trusted:   # a run the machine kept up with must show the paper's shape
        assert row.same_shape, row.shape_reason
