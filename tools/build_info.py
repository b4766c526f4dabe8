#!/usr/bin/env python3
"""What meson reads from the source tree at configure time (meson has no glob).

``python tools/build_info.py version``: the package version, read from
``sparseclust/__init__.py`` (its one source; ``meson.build`` passes it to ``project()``,
``pyproject.toml`` declares it dynamic).

``python tools/build_info.py files DIR``: the files of the package folder ``DIR`` the
wheel ships as they are, one a line, relative to ``DIR``: every ``.py`` module,
``py.typed`` and the data sets (``datasets/data/*.csv.gz``, ``*.csv``). Compiled modules
(``.pyx``) are listed by the ``meson.build`` of their folder; caches (``__pycache__``)
and build leftovers are never shipped. A file added later needs a new configure (``pip
install`` again; the tests check the wheel holds every ``.py`` file of the tree).

Not executable on purpose: meson then runs it with its own Python (``meson.build``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Folders never shipped (caches, build leftovers).
SKIP = {"__pycache__", "build", ".mesonpy"}


def version() -> str:
    text = (ROOT / "sparseclust" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', text, flags=re.MULTILINE)
    if found is None:
        raise SystemExit('sparseclust/__init__.py has no line __version__ = "..."')
    return found.group(1)


def shipped(path: Path) -> bool:
    """Whether ``path`` (relative to the package folder) is shipped as it is."""
    name = path.name
    if path.suffix == ".py" or name == "py.typed":
        return True
    return path.parent.as_posix() == "datasets/data" and name.endswith((".csv.gz", ".csv"))


def files(folder: str) -> list[str]:
    top = (ROOT / folder).resolve()
    out = []
    for path in sorted(top.rglob("*")):
        rel = path.relative_to(top)
        if path.is_file() and not SKIP.intersection(rel.parts) and shipped(rel):
            out.append(rel.as_posix())
    return out


if __name__ == "__main__":
    if sys.argv[1:] == ["version"]:
        print(version())
    elif len(sys.argv) == 3 and sys.argv[1] == "files":
        print("\n".join(files(sys.argv[2])))
    else:
        raise SystemExit("usage: build_info.py version | files DIR")
