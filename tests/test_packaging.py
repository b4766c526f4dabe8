"""Packaging: the wheel ships every module, the compiled kernels, data and py.typed; the
sdist the sources of the build; one version; the import stays light."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest

import sparseclust

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "sparseclust"


def _source_files(pattern: str) -> set[str]:
    """The package's files matching ``pattern``, as paths in a wheel (caches aside)."""
    return {
        p.relative_to(ROOT).as_posix() for p in PKG.rglob(pattern) if "__pycache__" not in p.parts
    }


def test_version_is_the_installed_metadata():
    """One version: ``sparseclust/__init__.py``'s, which meson reads for the metadata."""
    try:
        installed = version("sparseclust")
    except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
        pytest.skip("sparseclust is not installed")
    assert installed == sparseclust.__version__
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_info.py"), "version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == sparseclust.__version__


def test_build_lists_every_module():
    """``tools/build_info.py files``, what meson installs as it is, is every .py file of
    the package and its data, nothing else (compiled modules are built from .pyx)."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_info.py"), "files", "sparseclust"],
        capture_output=True,
        text=True,
        check=True,
    )
    listed = {f"sparseclust/{name}" for name in out.stdout.split()}
    data = _source_files("datasets/data/*.csv.gz") | _source_files("datasets/data/*.csv")
    assert listed == _source_files("*.py") | data | {"sparseclust/py.typed"}


def test_import_is_light():
    code = (
        "import sys, sparseclust, sparseclust.datasets, sparseclust.metrics; "
        "bad = [m for m in ('matplotlib.pyplot', 'statsmodels.api') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_compiled_module_is_built():
    """Each ``.pyx`` is named in its folder's ``meson.build`` (else it is never built and
    its import fails only when a fit reaches it), and the folder is a ``subdir`` of the
    package's ``meson.build``."""
    package = (PKG / "meson.build").read_text()
    for pyx in PKG.rglob("*.pyx"):
        build = pyx.parent / "meson.build"
        assert build.exists(), f"{pyx.relative_to(ROOT)}: no meson.build in its folder"
        assert f"'{pyx.stem}'" in build.read_text(), f"{pyx.name} not in {build}"
        assert f"subdir('{pyx.parent.name}')" in package, pyx.parent.name


@pytest.mark.slow
def _has_build_requirements() -> bool:
    """The build system's requirements (``[build-system] requires``) are installed here:
    the test extras install them."""
    import importlib.util

    return all(importlib.util.find_spec(m) for m in ("mesonpy", "Cython", "numpy", "scipy"))


#: Build in this environment when it has the build's requirements (the test extras):
#: no isolated build environment to make, half a minute saved per build. ``pip install
#: .`` (README, CI) builds in an isolated one.
_NO_ISOLATION = (
    {"pip": ["--no-build-isolation"], "build": ["--no-isolation"]}
    if _has_build_requirements()
    else {"pip": [], "build": []}
)


def _installed_from_this_checkout() -> bool:
    """The installed sparseclust is a plain (non-editable) install of this checkout, as
    CI makes it (README: ``pip install ".[test]"`` from the repository's root)."""
    import json
    from importlib.metadata import distribution

    try:
        text = distribution("sparseclust").read_text("direct_url.json")
    except PackageNotFoundError:
        return False
    url = json.loads(text or "{}")
    return url.get("url") == ROOT.as_uri() and not url.get("dir_info", {}).get("editable")


def _check_wheel_contents(names: set[str], read: Any) -> None:
    """The files of a wheel (its paths; ``read(path)`` its text): every module, each
    compiled module, the metadata, the entry point and the data sets."""
    missing = _source_files("*.py") - names
    assert not missing, f"modules not in the wheel: {sorted(missing)}"
    assert not any("__pycache__" in n or n.endswith((".pyx", ".h", ".build")) for n in names)
    for pyx in _source_files("*.pyx"):  # each compiled module, built for this Python
        stem = pyx.removesuffix(".pyx")
        assert any(n.startswith(stem + ".") and n.endswith((".so", ".pyd")) for n in names), pyx
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    lines = read(meta).splitlines()
    assert f"Version: {sparseclust.__version__}" in lines
    assert "License-Expression: BSD-3-Clause" in lines
    assert "sparseclust = sparseclust.__main__:main" in read(
        meta.replace("METADATA", "entry_points.txt")
    )
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


#: Imports the package, a compiled module and a data set, and fits: run outside the
#: repository and at its root.
_INSTALLED_CODE = (
    "import numpy as np, sparseclust, sparseclust.datasets as d; "
    "from sparseclust._sparse import hartigan_wong_jit as h; "
    "print(sparseclust.__file__); "
    "print(h.__file__); "
    "print(d.load_adult().shape); "
    "x = np.random.default_rng(0).normal(size=(30, 4)); "
    "print(sparseclust.sparse_kmeans(x, 2, wbound=1.5, rng=0).weights.size)"
)


def _check_install(py: Path | str, site: str, cwd: Path) -> None:
    """Outside the repository the package and its kernels are the installed copy's;
    from the repository's root (README: ``python -m sparseclust``, ``python -m pytest``
    run there after ``pip install .``) the modules are the checkout's, the compiled
    kernels the installed copy's."""
    out = subprocess.run([str(py), "-c", _INSTALLED_CODE], capture_output=True, text=True, cwd=cwd)
    assert out.returncode == 0, out.stderr
    where, kernels, shape, p = out.stdout.strip().splitlines()
    assert Path(where).is_relative_to(site), where  # the wheel, not the repo or the outer env
    assert Path(kernels).is_relative_to(site), kernels
    assert shape == "(48842, 15)"
    assert p == "4"
    out = subprocess.run([str(py), "-c", _INSTALLED_CODE], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    where, kernels, _, p = out.stdout.strip().splitlines()
    assert Path(where) == PKG / "__init__.py", where
    assert Path(kernels).is_relative_to(site), kernels
    assert p == "4"


def test_wheel_contents_and_install(tmp_path):
    """A plain (non-editable) build ships the modules, the compiled kernels and the data
    sets; an install works outside the repository and from its root.

    Where the running environment holds a plain install of this checkout (CI: the
    README's ``pip install ".[test]"``), that install is the wheel checked: its files
    (``RECORD``, less the bytecode pip compiled) are the wheel's, built as every user's
    is, and the package is not built a second time. Otherwise (an editable install, a
    copy installed from elsewhere) the wheel is built here and installed in a venv of
    its own."""
    if _installed_from_this_checkout():
        from importlib.metadata import distribution

        dist = distribution("sparseclust")
        names = {str(f) for f in dist.files or ()}
        names = {n for n in names if not n.endswith(".pyc")}
        site = str(dist.locate_file(""))
        _check_wheel_contents(names, lambda n: Path(dist.locate_file(n)).read_text())
        _check_install(sys.executable, site, tmp_path)
        return
    wheel_dir = tmp_path / "wheel"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(wheel_dir)]
        + _NO_ISOLATION["pip"],
        check=True,
    )
    (wheel,) = wheel_dir.glob("sparseclust-*.whl")
    archive = zipfile.ZipFile(wheel)
    _check_wheel_contents(set(archive.namelist()), lambda n: archive.read(n).decode())

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
    _check_install(py, venv_site, tmp_path)


@pytest.mark.slow
def test_sdist_holds_the_build_sources(tmp_path):
    """``python -m build --sdist``: the git-tracked sources of the build (meson dist),
    from which a wheel builds."""
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(ROOT)]
        + _NO_ISOLATION["build"],
        check=True,
        capture_output=True,
    )
    (sdist,) = tmp_path.glob(f"sparseclust-{sparseclust.__version__}.tar.gz")
    top = f"sparseclust-{sparseclust.__version__}/"
    with tarfile.open(sdist) as tar:
        names = {n.removeprefix(top) for n in tar.getnames()}
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    needed = [n for n in tracked if n.startswith("sparseclust/")] + [
        "meson.build",
        "pyproject.toml",
        "tools/build_info.py",
        "README.md",
        "LICENSE",
    ]
    if not tracked:  # pragma: no cover - not a git checkout
        pytest.skip("not a git checkout")
    missing = sorted(set(needed) - names)
    assert not missing, f"not in the sdist: {missing}"
    assert "PKG-INFO" in names


#: The import name of each dependency that ``pip install .`` installs, where it differs.
_IMPORT_NAMES = {"scikit-learn": "sklearn"}
#: Libraries the package imports only inside the functions that need them, with a
#: message naming the install when missing: the extras' (a Dask frame given, a Dask
#: scheduler running) and pyarrow (the command line reading Parquet).
_OPTIONAL = {"dask", "distributed", "pyarrow"}


def test_every_import_is_installed_by_pip_install():
    """CI installs ``.[test]`` once (the README's test command): this checks what that
    cannot, that ``pip install .`` alone installs every library the package imports
    (``[project] dependencies``), the extras' libraries imported only inside functions."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0].lower() for d in meta}
    installed = {_IMPORT_NAMES.get(n, n) for n in names}
    top_level, anywhere = set(), set()
    for path in PKG.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found = {node.module.split(".")[0]}
            else:
                continue
            anywhere |= found
            if node in tree.body:
                top_level |= found
    third_party = {m for m in anywhere if m not in sys.stdlib_module_names} - {"sparseclust"}
    assert third_party - installed == _OPTIONAL, third_party - installed
    assert not (top_level & _OPTIONAL), top_level & _OPTIONAL
