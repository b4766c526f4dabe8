"""The README's set-up commands and its Python example stay true, and so do the user
guide's tested snippets (automatic K, the Dask scripts), which moved there from it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
CHOOSING_K = (ROOT / "docs" / "guide" / "choosing-k.md").read_text()
DASK = (ROOT / "docs" / "guide" / "dask.md").read_text()


def _readme_commands() -> list[str]:
    return re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()


def test_ci_runs_the_readme_test_command():
    first, test = _readme_commands()
    assert first.startswith("pip install . && python -m sparseclust ")
    assert test.startswith('pip install ".[test]" && ')  # installs what `pip install .` does
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test in ci  # as written, inside a fresh venv that CI makes itself
    venv = next(i for i, line in enumerate(ci) if "-m venv" in line)
    activate = next(
        i for i, line in enumerate(ci) if line.startswith("source ") and "activate" in line
    )
    assert venv < activate < min(i for i, line in enumerate(ci) if line.startswith("pip install"))
    assert "--system-site-packages" not in "\n".join(ci)


def test_readme_quick_start_command():
    """The README's first command after its install: the command line, in a new process,
    prints the fit, its summary and the agreement with the known classes."""
    first, _ = _readme_commands()
    args = first.split(" && ", 1)[1].split()
    assert args[:3] == ["python", "-m", "sparseclust"]
    out = subprocess.run(
        [sys.executable, *args[1:]], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("CRAFT (m=0.5, ") and "with 3 clusters on 178 obs" in out.stdout
    assert "Call:" in out.stdout and "Agreement of the clusters with 'class'" in out.stdout


def test_python_example_runs_and_prints_what_readme_shows(capsys):
    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102
    shown = re.search(r"```python\n.*?```\n\n```\n(.*?)```", README, re.S).group(1)
    assert repr(namespace["fit"]) == shown.rstrip("\n")


def test_craft_method_example_chooses_k():
    """The CRAFT snippet of the guide's "Choosing the number of clusters", automatic K
    included."""
    code = next(
        b for b in re.findall(r"```python\n(.*?)```", CHOOSING_K, re.S) if "craft_fig2a(rng=0)" in b
    )
    namespace: dict = {}
    exec(compile(code, "choosing-k.md", "exec"), namespace)  # noqa: S102
    assert namespace["fit"].selected.sum(axis=1).tolist() == [8, 8, 8]
    assert namespace["auto"].n_clusters == 3
    assert namespace["ax"].get_ylabel() == "stability across subsamples"


def _dask_scripts() -> list[str]:
    return [
        b
        for b in re.findall(r"```python\n(.*?)```", DASK, re.S)
        if "LocalCluster" in b and 'if __name__ == "__main__":' in b
    ]


def test_dask_guide_has_both_scripts():
    scripts = _dask_scripts()
    assert len(scripts) == 2
    assert "fit.labels.compute()" in scripts[0]
    assert "select_dtypes(" in scripts[1]


@pytest.mark.parametrize("which", [0, 1], ids=["craft", "sparse_kmeans"])
def test_dask_example_runs_as_a_script(which, tmp_path):
    """Pasted into a file and run, each Dask example exits 0 and prints to stderr only
    the PerformanceWarning its small data set draws: no traceback, no lost-task or
    shutdown warning from the cluster."""
    pytest.importorskip("distributed")
    script = tmp_path / "example.py"
    # the dashboard on a free port: another Dask cluster on the machine (a second test
    # run) holding 8787 would make distributed warn on stderr
    code = _dask_scripts()[which]
    assert code.count("LocalCluster(n_workers=") == 1
    script.write_text(code.replace("LocalCluster(", 'LocalCluster(dashboard_address=":0", '))
    out = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    warned = [line for line in lines if "PerformanceWarning" in line]
    assert warned, out.stderr
    # every other line is the source line Python prints under a warning
    others = [line for line in lines if "PerformanceWarning" not in line]
    assert all(line.startswith("  ") and "(" in line for line in others), out.stderr
    if which == 0:
        assert "Name: count" in out.stdout and "cluster" in out.stdout
    else:
        assert "capital-gain" in out.stdout
