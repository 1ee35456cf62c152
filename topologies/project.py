"""Where the project's checkout is: the one definition every module uses to
find build/, notebooks/, bench/, README.md or to start `python -m <module>`.

It lives in topologies, the lowest layer that needs it (the port program's
object file sits under build/). lab/run.py and exercises/grading.py keep their
own copy: they run before the project is importable and put it on sys.path.
"""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
