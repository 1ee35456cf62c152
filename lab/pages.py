"""The page of a run (report.html) and of a `lab/run.py paper` pass (paper.html): the project's
own notebook for it (notebooks/00-report.ipynb, notebooks/07-paper-report.ipynb) executed on that
results directory with nbclient, then exported by Jupyter's nbconvert into the directory.

The page opens from the file system with no server and sends no request anywhere: every figure
is embedded, the raw files are relative links, and the template is nbconvert's own `lab`
template without its script tags (require.js, MathJax, mermaid and widgets come from CDNs, and
none of the pages needs them).
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import nbformat
from jinja2 import DictLoader
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter
from nbconvert.preprocessors import TagRemovePreprocessor

from lab.jupyter.notebook_cmd import NOTEBOOKS, ensure_kernel
from lab.jupyter.notebook_support import runs
from lab.paper.rows import is_paper_run
from topologies.system.atomic import write_text_atomic

RUN_NOTEBOOK, RUN_PAGE = "00-report", "report.html"
PAPER_NOTEBOOK, PAPER_PAGE = "07-paper-report", "paper.html"
CELL_TIMEOUT_S = 300   # a cell of a large run's notebook; the default run's whole page takes seconds
NOTEBOOK_ONLY = "notebook-only"   # the tag of cells for a notebook's user (its parameter), left off a page
# nbconvert's own log: its warnings (a figure without alt text, which it then gives one) are not the command's output
EXPORT_LOG = logging.getLogger("lab.pages.nbconvert")
EXPORT_LOG.setLevel(logging.ERROR)

OFFLINE_TEMPLATE = "offline.html.j2"
# nbconvert's lab template (index.html.j2) with every block that loads a script emptied
OFFLINE = DictLoader({OFFLINE_TEMPLATE: """{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""})


class PageError(RuntimeError):
    """A page that could not be made; the message is one line."""


def has_page(results: Path) -> bool:
    """Whether a directory is a run's (config.json) or a paper pass's (paper.json)."""
    return is_paper_run(results) or (results / "config.json").is_file()


def newest_page_dir(root: Path) -> Path:
    """The newest run or paper pass under `root` (a bench's directory is neither)."""
    found = next((run for run in runs(root) if has_page(run)), None)
    if found is None:
        raise PageError(f"no runs under {root}: run `sudo python lab/run.py` first")
    return found


def page_of(results: Path) -> tuple[str, str]:
    """(notebook, page file) for a results directory: a paper pass's or a run's."""
    return (PAPER_NOTEBOOK, PAPER_PAGE) if is_paper_run(results) else (RUN_NOTEBOOK, RUN_PAGE)


def write_page(results: str | Path) -> Path:
    """Execute the directory's notebook on it and write its page there; returns the page's path.
    PageError, in one line, if the directory is not a run or a cell fails."""
    results = Path(results).absolute()
    if not results.is_dir():
        raise PageError(f"no results directory at {results}")
    if not has_page(results):
        raise PageError(f"{results} is neither a run (config.json) nor a paper pass (paper.json)")
    notebook, page = page_of(results)
    book = executed(notebook, results)
    book.metadata["title"] = f"{results.name}: {'the paper pass' if page == PAPER_PAGE else 'the run'}"
    return write_text_atomic(results / page, to_html(book))


def executed(notebook: str, results: Path) -> nbformat.NotebookNode:
    """The notebook with its RESULTS parameter set to `results`, after running every cell."""
    book = nbformat.read(NOTEBOOKS / f"{notebook}.ipynb", as_version=4)
    parameters = [cell for cell in book.cells if "parameters" in tags(cell)]
    if len(parameters) != 1:
        raise PageError(f"notebooks/{notebook}.ipynb has {len(parameters)} cells tagged parameters, not 1")
    parameters[0].source = f"RESULTS = {str(results)!r}"
    try:
        kernel = ensure_kernel()
    except subprocess.CalledProcessError as exc:
        raise PageError(f"the notebooks' kernel could not be registered: {exc.stderr.strip() or exc}") from None
    client = NotebookClient(book, timeout=CELL_TIMEOUT_S, kernel_name=kernel,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    try:
        # the kernel's own log (ipykernel warns of its TCP transport on every start) is not the command's output
        client.execute(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except CellExecutionError as exc:   # the cell's error, without its traceback
        raise PageError(f"notebooks/{notebook}.ipynb failed on {results}: {exc.ename}: {exc.evalue}") from None
    except (RuntimeError, TimeoutError) as exc:   # the kernel did not start, died, or a cell ran too long
        raise PageError(f"notebooks/{notebook}.ipynb on {results}: {type(exc).__name__}: {exc}") from None
    return book


def tags(cell: nbformat.NotebookNode) -> list[str]:
    return cell.metadata["tags"] if "tags" in cell.metadata else []


def to_html(book: nbformat.NotebookNode) -> str:
    """The executed notebook as one self-contained HTML page: outputs and prose, no code."""
    exporter = HTMLExporter(log=EXPORT_LOG, template_name="lab", extra_loaders=[OFFLINE],
                            template_file=OFFLINE_TEMPLATE, exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True, embed_images=True)
    exporter.register_preprocessor(TagRemovePreprocessor(remove_cell_tags={NOTEBOOK_ONLY}), enabled=True)
    html, _ = exporter.from_notebook_node(book)
    return html
