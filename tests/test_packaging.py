"""Packaging: the wheel ships data and py.typed; the import stays light."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
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

    # A venv of its own (no --system-site-packages: that would inherit the *base*
    # interpreter's packages, not this environment's). The running environment's
    # site-packages are added by a .pth file after the venv's own, so the wheel
    # installed into the venv is the sparseclust that imports, and its dependencies
    # are the ones this test run uses, whatever the machine has outside it.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    venv_site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(venv_site) / "_outer_env.pth").write_text("\n".join(sorted(ours)) + "\n")
    subprocess.run(
        [str(py), "-m", "pip", "install", "--no-deps", "--force-reinstall", "-q", str(wheel)],
        check=True,
    )
    code = (
        "import sparseclust, sparseclust.datasets as d; "
        "print(sparseclust.__file__); "
        "print(d.load_adult().shape)"
    )
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    where, shape = out.stdout.strip().splitlines()
    assert Path(where).is_relative_to(venv_site), where  # the wheel, not the repo or the outer env
    assert shape == "(48842, 15)"
