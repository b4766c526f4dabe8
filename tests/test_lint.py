"""House style is enforced in CI: ruff check and ruff format --check (skipped without ruff)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff not installed (pip install '.[test]')")
@pytest.mark.parametrize("args", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff(args):
    out = subprocess.run(
        [RUFF, *args, "sparseclust", "tests", "benchmarks", "vignettes", "datasets"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
