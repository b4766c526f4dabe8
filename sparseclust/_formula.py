"""Formulas for clustering: one variable per term, never a design matrix.

Grammar (parsed with patsy's public ``ModelDesc.from_formula``):

* ``~ x1 + x2``            the named columns, typed by automatic detection;
* ``~ C(x2)``              force categorical (``C(x, levels=[...])`` fixes the levels);
* ``~ N(x3)``              force numeric;
* ``~ np.log(x3)``         any expression evaluated in the data and the caller's namespace;
* ``~ .``                  every column (expanded by sparseclust before parsing);
* ``~ . - id``             every column but ``id``;
* ``Q("odd name")``        a column whose name is not a Python identifier;
* ``y ~ .``                response + covariates, only for methods that take a response.

A categorical term stays ONE variable (selection is per variable). Interactions
(``a:b``, ``a*b``), ``0 +`` / ``- 1`` and a left-hand side where the method takes
none raise :class:`~sparseclust.exceptions.FormulaError`.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .exceptions import FormulaError

__all__ = ["C", "N", "ParsedFormula", "evaluate_formula"]

_DOT = re.compile(r"(?<![\w.)\]\"'])\.(?![\w.])")
_SIMPLE = re.compile(r"^(?:C|N)\((.*?)(?:,.*)?\)$")
_Q = re.compile(r"^Q\((['\"])(.*)\1\)$")


class _Forced:
    """Marker returned by :func:`C` / :func:`N` inside a formula."""

    def __init__(self, values: Any, kind: str, levels: Any = None) -> None:
        self.values = values
        self.kind = kind
        self.levels = levels


def C(x: Any, levels: Any = None) -> _Forced:  # noqa: N802 - formula vocabulary
    """Inside a formula: treat ``x`` as categorical (optionally with fixed ``levels``)."""
    return _Forced(x, "categorical", levels)


def N(x: Any) -> _Forced:  # noqa: N802 - formula vocabulary
    """Inside a formula: treat ``x`` as numeric."""
    return _Forced(x, "numeric")


def Q(name: str) -> Any:  # noqa: N802 - placeholder, bound per evaluation
    raise RuntimeError("Q() is only meaningful inside a formula")


@dataclass(frozen=True)
class ParsedFormula:
    """Result of evaluating a formula against a DataFrame."""

    formula: str
    variables: pd.DataFrame  # one column per term, index = data index
    forced: dict[str, str]  # name -> "categorical" / "numeric"
    levels: dict[str, Any]  # name -> levels given in C(x, levels=...)
    response: pd.Series | None
    codes: dict[str, str]  # name -> term code (for re-evaluation on new data)
    response_code: str | None


def _quote(name: str) -> str:
    if name.isidentifier() and not keyword.iskeyword(name) and name not in {"C", "N", "Q", "I"}:
        return name
    return "Q(" + repr(name) + ")"


def _term_name(code: str) -> str:
    """Variable name for a term: the column for ``x``, ``C(x)``, ``N(x)``, ``Q("x")``."""
    m = _SIMPLE.match(code)
    inner = m.group(1).strip() if m else code
    q = _Q.match(inner)
    if q:
        return q.group(2)
    if inner.isidentifier():
        return inner
    return code


_MINUS = re.compile(r"-\s*(Q\((['\"])(.*?)\2\)|[A-Za-z_]\w*)(?=\s*(?:[-+)]|$))")


def _expand_dot(rhs: str, columns: list[str], exclude: set[str]) -> str:
    if not _DOT.search(rhs):
        return rhs
    # "- name" next to a dot removes the column from the expansion itself (so that
    # columns named like Python keywords, e.g. "class", need no quoting).
    removed = set()

    def drop(m: re.Match) -> str:
        name = m.group(3) if m.group(3) is not None else m.group(1)
        if name in columns:
            removed.add(name)
            return ""
        return m.group(0)

    rhs = _MINUS.sub(drop, rhs)
    cols = [c for c in columns if c not in exclude and c not in removed]
    if not cols:
        raise FormulaError("'.' expands to no columns: the data has no column besides the response.")
    expansion = "(" + " + ".join(_quote(c) for c in cols) + ")"
    return _DOT.sub(lambda _: expansion, rhs)


def evaluate_formula(
    formula: str,
    data: pd.DataFrame,
    *,
    response: bool = False,
    eval_env: dict[str, Any] | None = None,
) -> ParsedFormula:
    """Evaluate a clustering formula on ``data``.

    Parameters
    ----------
    formula : str
        ``"~ x1 + C(x2) + np.log(x3)"``, ``"~ ."``, ``"~ . - id"``, or with
        ``response=True`` also ``"y ~ ."``.
    data : DataFrame
    response : bool
        Whether the calling method accepts a left-hand side.
    eval_env : dict, optional
        Namespace (usually the caller's globals and locals) for functions such as ``np``.

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1.0, 2.0, 4.0], "b": ["u", "v", "u"], "id": [1, 2, 3]})
    >>> pf = evaluate_formula("~ . - id", df)
    >>> list(pf.variables.columns)
    ['a', 'b']
    >>> evaluate_formula("~ np.log(a) + C(id)", df).forced
    {'id': 'categorical'}
    """
    import patsy

    if not isinstance(formula, str):
        raise TypeError(f"formula must be a string such as '~ x1 + C(x2)'; got {formula!r}.")
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"A formula needs data= as a pandas DataFrame; got {type(data).__name__}."
        )
    if "~" not in formula:
        raise FormulaError(
            f"formula {formula!r} has no '~'. Write a one-sided formula such as '~ x1 + C(x2)'."
        )
    lhs_text, rhs_text = formula.split("~", 1)
    columns = [str(c) for c in data.columns]
    lhs_text = lhs_text.strip()
    if lhs_text and not response:
        raise FormulaError(
            f"clustering formulas are one-sided; got a left-hand side in {formula!r}. "
            f"Use '~ {rhs_text.strip()}'."
        )
    if not rhs_text.strip():
        raise FormulaError(f"formula {formula!r} has no right-hand side; use e.g. '~ .'.")
    exclude: set[str] = set()
    if lhs_text:
        exclude = {_term_name(lhs_text)} | {c for c in columns if c == lhs_text}
    rhs_text = _expand_dot(rhs_text, columns, exclude)
    try:
        desc = patsy.ModelDesc.from_formula(f"{lhs_text} ~ {rhs_text}")
    except patsy.PatsyError as err:
        raise FormulaError(f"cannot parse formula {formula!r}: {err}") from None

    rhs_terms = list(desc.rhs_termlist)
    has_intercept = any(len(t.factors) == 0 for t in rhs_terms)
    if not has_intercept:
        raise FormulaError(
            f"'0 +' / '- 1' mean nothing for clustering (there is no intercept); "
            f"remove them from {formula!r}."
        )
    terms = [t for t in rhs_terms if len(t.factors) > 0]
    for t in terms:
        if len(t.factors) > 1:
            raise FormulaError(
                f"interaction term {t.name()!r} in {formula!r} is not supported: clustering "
                f"selects whole variables. Create the combined column first, e.g. "
                f"df['a_b'] = df['a'].astype(str) + '_' + df['b'].astype(str)."
            )
    if not terms:
        raise FormulaError(f"formula {formula!r} selects no variables.")

    namespace = _namespace(data)
    env = {"np": np, "pd": pd}
    if eval_env:
        env.update(eval_env)
    env.update({"C": C, "N": N, "Q": lambda name: _q(data, name)})

    def _eval(code: str) -> Any:
        try:
            return eval(code, env, namespace)  # noqa: S307 - formula evaluation by design
        except NameError as err:
            raise FormulaError(
                f"{err} while evaluating {code!r}; available columns: {columns}."
            ) from None
        except FormulaError:
            raise
        except Exception as err:  # noqa: BLE001 - report any evaluation failure clearly
            raise FormulaError(f"cannot evaluate term {code!r}: {type(err).__name__}: {err}") from None

    resp = None
    resp_code = None
    if lhs_text:
        lhs_terms = [t for t in desc.lhs_termlist if len(t.factors) > 0]
        if len(lhs_terms) != 1 or len(lhs_terms[0].factors) != 1:
            raise FormulaError(
                f"the left-hand side of {formula!r} must be one variable (the response)."
            )
        resp_code = lhs_terms[0].factors[0].code
        val = _eval(resp_code)
        if isinstance(val, _Forced):
            val = val.values
        resp = _as_series(val, data.index, _term_name(resp_code))

    cols: dict[str, pd.Series] = {}
    forced: dict[str, str] = {}
    levels: dict[str, Any] = {}
    codes: dict[str, str] = {}
    for t in terms:
        code = t.factors[0].code
        name = _term_name(code)
        if name in cols:
            raise FormulaError(f"variable {name!r} appears twice in {formula!r}.")
        val = _eval(code)
        if isinstance(val, _Forced):
            forced[name] = val.kind
            if val.levels is not None:
                levels[name] = list(val.levels)
            val = val.values
        cols[name] = _as_series(val, data.index, name)
        codes[name] = code
    variables = pd.DataFrame(cols, index=data.index)
    return ParsedFormula(formula, variables, forced, levels, resp, codes, resp_code)


def _namespace(data: pd.DataFrame) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    for c in data.columns:
        ns[str(c)] = data[c]
    return ns


def _q(data: pd.DataFrame, name: str) -> pd.Series:
    for c in data.columns:
        if str(c) == name:
            return data[c]
    raise FormulaError(f"Q({name!r}): no such column; available columns: {list(map(str, data.columns))}.")


def _as_series(val: Any, index: pd.Index, name: str) -> pd.Series:
    if isinstance(val, pd.Series):
        if not val.index.equals(index):
            val = val.reindex(index)
        return val.rename(name)
    if isinstance(val, pd.Categorical):
        return pd.Series(val, index=index, name=name)
    arr = np.asarray(val)
    if arr.ndim == 0:
        raise FormulaError(f"term {name!r} evaluates to a single value, not a column.")
    if arr.ndim > 1:
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        else:
            raise FormulaError(f"term {name!r} evaluates to several columns; use one term per column.")
    if len(arr) != len(index):
        raise FormulaError(f"term {name!r} has length {len(arr)}, data has {len(index)} rows.")
    return pd.Series(arr, index=index, name=name)
