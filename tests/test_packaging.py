"""Packaging: the wheel ships data and py.typed; the import stays light."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_is_light():
    code = (
        "import sys, sparseclust, sparseclust.datasets, sparseclust.metrics; "
        "bad = [m for m in ('matplotlib.pyplot', 'statsmodels.api') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow
def test_wheel_contents_and_install(tmp_path):
    """A plain (non-editable) build ships the data sets; an install works outside the repo."""
    wheel_dir = tmp_path / "wheel"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(wheel_dir)],
        check=True,
    )
    (wheel,) = wheel_dir.glob("sparseclust-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    data = {Path(n).name for n in names if "/datasets/data/" in n}
    for ds in [
        "spambase",
        "wine",
        "splice",
        "monk3",
        "adult",
        "penguins",
        "heart_disease_cleveland",
        "mushroom_complete",
        "soybean_large",
        "zoo",
        "house_votes_84",
    ]:
        assert f"{ds}.csv.gz" in data
    assert "datasets.csv" in data
    assert not any("banknote" in n for n in names)
    assert "sparseclust/py.typed" in names
    assert "sparseclust/__main__.py" in names
    assert not any(n.startswith("tests/") for n in names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "--no-deps", "--force-reinstall", "-q", str(wheel)],
        check=True,
    )
    code = (
        "import sparseclust, sparseclust.datasets as d; "
        "assert 'site-packages' in sparseclust.__file__, sparseclust.__file__; "
        "print(d.load_adult().shape)"
    )
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(48842, 15)"
