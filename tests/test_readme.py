"""The README's set-up commands and its Python example stay true."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_ci_runs_the_readme_test_command():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert len(first_block) == 2
    assert first_block[0].startswith("pip install . && python -m sparseclust ")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    # both README commands, as written, inside a fresh venv that CI makes itself
    assert any(line.startswith(first_block[0]) for line in ci)
    assert first_block[1] in ci
    venv = next(i for i, line in enumerate(ci) if "-m venv" in line)
    activate = next(
        i for i, line in enumerate(ci) if line.startswith("source ") and "activate" in line
    )
    assert venv < activate < min(i for i, line in enumerate(ci) if line.startswith("pip install"))
    assert "--system-site-packages" not in "\n".join(ci)


def test_python_example_runs_and_prints_what_readme_shows(capsys):
    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102
    shown = re.search(r"```python\n.*?```\n\n```\n(.*?)```", README, re.S).group(1)
    assert repr(namespace["fit"]) == shown.rstrip("\n")


def test_craft_method_example_chooses_k():
    """The CRAFT snippet of "One example per method", automatic K included."""
    code = next(
        b for b in re.findall(r"```python\n(.*?)```", README, re.S) if "craft_fig2a(rng=0)" in b
    )
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["fit"].selected.sum(axis=1).tolist() == [8, 8, 8]
    assert namespace["auto"].n_clusters == 3
    assert namespace["ax"].get_ylabel() == "stability across subsamples"
