"""House style is enforced in CI: ruff check and ruff format --check (skipped without ruff)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HAVE_RUFF = importlib.util.find_spec("ruff") is not None


@pytest.mark.skipif(not HAVE_RUFF, reason="ruff not installed (pip install '.[test]')")
@pytest.mark.parametrize("args", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff(args):
    """The whole repository, README's code blocks included (ruff formats Markdown)."""
    out = subprocess.run(
        [sys.executable, "-m", "ruff", *args, "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
