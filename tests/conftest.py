"""Shared test set-up: Agg backend, figures closed after each test, golden files."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

try:  # hypothesis profiles: "ci" keeps the suite within a few minutes on 2 cores
    from hypothesis import settings

    settings.register_profile("ci", max_examples=40, deadline=None)
    settings.register_profile("dev", max_examples=200, deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # pragma: no cover
    pass

GOLDEN = Path(__file__).parent / "golden"


def pytest_configure(config: pytest.Config) -> None:
    """Python's own Ctrl-C handler, as a process started from a terminal has it: a
    runner that starts the suite in the background without job control passes SIGINT
    ignored, and the tests of Ctrl-C would then test nothing."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/*.txt from the current output",
    )


@pytest.fixture(autouse=True)
def close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)


@pytest.fixture
def golden(request: pytest.FixtureRequest):
    """``golden(name, text)``: compare with tests/golden/<name>.txt (or rewrite it)."""
    update = request.config.getoption("--update-golden")

    def check(name: str, text: str) -> None:
        path = GOLDEN / f"{name}.txt"
        if update or not path.exists():
            if not update:
                pytest.fail(f"golden file {path} is missing; run pytest --update-golden")
            path.write_text(text + "\n")
            return
        assert text + "\n" == path.read_text(), f"output differs from {path}"

    return check
