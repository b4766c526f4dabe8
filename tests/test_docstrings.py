"""Every public docstring the API pages show, without building the site: each function,
class, method and property has an Examples section (run as doctests by
``--doctest-modules``), and numpydoc's validation, configured as in ``docs/conf.py``,
reports no error. The members are the ones ``docs/_templates/autosummary/class.rst``
puts on a class page: ``:members:`` (with ``:inherited-members:`` for result types)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
from functools import cached_property
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# the public modules whose names get API pages (one list, in tests/test_docs.py)
PUBLIC_MODULES = _load("_docs_tests", ROOT / "tests/test_docs.py").PUBLIC_MODULES
# the class template's :exclude-members:
NOT_SHOWN = {"__init__", "__new__", "set_fit_request", "set_predict_request", "set_score_request"}
EXAMPLES = re.compile(r"^Examples\n-{3,}\n", re.M)


def _public_objects() -> dict[str, object]:
    """``module.name`` -> object for every name in the public modules' ``__all__``
    (first spelling of an object exported twice)."""
    seen: dict[int, str] = {}
    out = {}
    for module in PUBLIC_MODULES:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if name.startswith("__") or id(obj) in seen:
                continue
            seen[id(obj)] = name
            out[f"{module}.{name}"] = obj
    return out


def _members(qualname: str, cls: type) -> list[str]:
    """Public methods and properties on the class page, as the class template lists them."""
    inherited = qualname.endswith(("Result", "Path"))
    owners = [c for c in cls.__mro__ if c is not object] if inherited else [cls]
    names: list[str] = []
    for owner in owners:
        names += [n for n in vars(owner) if n not in names]
    out = []
    for name in names:
        if name.startswith("_") or name in NOT_SHOWN:
            continue
        raw = inspect.getattr_static(cls, name)
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
        if (inspect.isfunction(raw) or isinstance(raw, (property, cached_property))) and (
            inspect.getdoc(getattr(cls, name))
        ):
            out.append(f"{qualname}.{name}")
    return out


def _documented() -> dict[str, object]:
    """Every documented public name: functions and classes, and the classes' members."""
    out = {}
    for name, obj in _public_objects().items():
        if not (inspect.isclass(obj) or callable(obj)):
            continue  # data (DESIGNS, __version__): documented by its module
        out[name] = obj
        if inspect.isclass(obj):
            for member in _members(name, obj):
                out[member] = None
    return out


def _docstring(name: str, obj: object) -> str:
    if obj is not None:
        return inspect.getdoc(obj) or ""
    qual, _, attr = name.rpartition(".")
    module, _, cls = qual.rpartition(".")
    raw = inspect.getattr_static(getattr(importlib.import_module(module), cls), attr)
    return inspect.getdoc(raw.fget if isinstance(raw, property) else raw) or ""


def test_every_public_docstring_has_examples():
    documented = _documented()
    assert len(documented) > 200  # functions, classes and their members
    missing = [n for n, obj in documented.items() if not EXAMPLES.search(_docstring(n, obj))]
    assert not missing, f"{len(missing)} docstrings without an Examples section: {missing}"


def test_numpydoc_validation_reports_no_error():
    """The checks, overrides and exclusions of docs/conf.py, on the same names."""
    pytest.importorskip("numpydoc", reason="pip install '.[docs]'")
    from numpydoc.validate import get_validation_checks, validate

    conf = _load("_sparseclust_docs_conf", ROOT / "docs/conf.py")
    checks = get_validation_checks(conf.numpydoc_validation_checks)
    excluded = re.compile("|".join(conf.numpydoc_validation_exclude))
    overrides = {
        code: re.compile("|".join(patterns))
        for code, patterns in conf.numpydoc_validation_overrides.items()
    }
    failures = []
    for name in _documented():
        if excluded.search(name):
            continue
        report = validate(name)
        errors = [
            f"{code}: {msg}"
            for code, msg in report["errors"]
            if code in checks
            and not (code in overrides and overrides[code].search(report["docstring"]))
        ]
        if errors:
            failures.append(f"{name}: " + "; ".join(errors))
    assert not failures, "\n".join(failures)
