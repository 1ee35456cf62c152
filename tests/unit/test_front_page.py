"""README.md stays a front page: short, every link it makes leads to a file, and the measured
tables `--update-readme` rewrites live on the docs/ pages lab/bench_report.py names (TABLE_PAGES)."""

import re

from lab import bench_report
from lab.bench_report import TABLE_PAGES
from topologies.project import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
FRONT_PAGE_BYTES = 12_000   # a newcomer's read; the details live in docs/


def test_readme_is_a_front_page():
    assert README.stat().st_size <= FRONT_PAGE_BYTES, "README.md grew past a front page: move details to docs/"


def test_readme_links_lead_to_files():
    links = re.findall(r"\]\(([^)#]+)\)", README.read_text())
    assert links, "README.md links to no page"
    missing = [link for link in links if not (PROJECT_ROOT / link).is_file()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_every_table_block_is_on_its_page():
    for block, page in TABLE_PAGES.items():
        text = (PROJECT_ROOT / page).read_text()
        start, end = text.find(f"<!-- {block}:start -->"), text.find(f"<!-- {block}:end -->")
        assert 0 <= start < end, f"{page} has no {block} block for --update-readme to rewrite"
    assert "<!--" not in README.read_text(), "README.md holds a marked block no command rewrites any more"


def test_update_readme_rewrites_its_block_on_its_page_only(tmp_path, monkeypatch):
    """save_report, as `bench`/`paper --update-readme` call it, on a copy of the project's pages."""
    for page in set(TABLE_PAGES.values()):
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text((PROJECT_ROOT / page).read_text())
    monkeypatch.setattr(bench_report, "PROJECT_ROOT", tmp_path)
    for block, page in TABLE_PAGES.items():
        original = (tmp_path / page).read_text()
        bench_report.save_report(tmp_path, "report", "new table\n", {}, None, block)
        before, _, rest = original.partition(f"<!-- {block}:start -->")
        after = rest.partition(f"<!-- {block}:end -->")[2]
        written = f"<!-- {block}:start -->\nnew table\n<!-- {block}:end -->"
        assert (tmp_path / page).read_text() == before + written + after, f"{block} on {page}"
