"""Formulas for clustering: one variable per term, never a design matrix.

Grammar (parsed with patsy's public ``ModelDesc.from_formula``):

* ``~ x1 + x2``            the named columns, typed by automatic detection;
* ``~ C(x2)``              force categorical (``C(x, levels=[...])`` fixes the levels);
* ``~ N(x3)``              force numeric;
* ``~ np.log(x3)``         any expression evaluated in the data and the caller's namespace
                           (``I(...)`` is accepted and does nothing, as in patsy);
* ``~ .``                  every column (expanded by sparseclust before parsing);
* ``~ . - id``             every column but ``id`` (an unknown name after ``-`` is an error);
* ``Q("odd name")``        a column whose name is not a Python identifier; columns named
                           like Python keywords (``class``) may be written bare;
* ``y ~ .``                response + covariates, only for methods that take a response;
                           ``.`` then leaves out every column used on the left.

A variable is named after its column (``x`` for ``x``, ``C(x)``, ``N(x)`` and
``Q("x")``) or, for an expression, after its code (``np.log(x)``). A categorical
term stays ONE variable (selection is per variable). Interactions (``a:b``,
``a*b``), ``0 +`` / ``- 1`` and a left-hand side where the method takes none raise
:class:`~sparseclust.exceptions.FormulaError`.

Functions from the caller's namespace are looked up when the formula is evaluated;
the names a formula uses are kept (modules by name) so that new data can be read
the same way later.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import io
import keyword
import tokenize
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import FormulaError

__all__ = ["C", "I", "N", "ParsedFormula", "evaluate_formula", "evaluate_terms"]

#: Names bound by sparseclust inside formulas; a column with one of these names must be
#: written ``Q("C")``.
_FORMULA_FUNCS = frozenset({"C", "N", "Q", "I"})


class _Forced:
    """Marker returned by :func:`C` / :func:`N` inside a formula."""

    def __init__(self, values: Any, kind: str, levels: Any = None) -> None:
        self.values = values
        self.kind = kind
        self.levels = levels


def C(x: Any, levels: Any = None) -> _Forced:  # noqa: N802 - formula vocabulary
    """Inside a formula: treat ``x`` as categorical (optionally with fixed ``levels``)."""
    if levels is not None and (isinstance(levels, str) or not np.iterable(levels)):
        raise FormulaError(
            f"C(..., levels=) takes a list of levels; got levels={levels!r}. "
            f"Use e.g. C(x, levels=['low', 'mid', 'high'])."
        )
    return _Forced(x, "categorical", None if levels is None else list(levels))


def N(x: Any) -> _Forced:  # noqa: N802 - formula vocabulary
    """Inside a formula: treat ``x`` as numeric."""
    return _Forced(x, "numeric")


def I(x: Any) -> Any:  # noqa: N802, E743 - formula vocabulary (patsy's identity)
    """Inside a formula: the value itself (as patsy's ``I()``)."""
    return x


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
    env: dict[str, Any] = field(default_factory=dict, repr=False)  # names the codes use
    #: the variables that ``.`` expanded to (the others were named in the formula)
    dotted: tuple[str, ...] = ()


# ----------------------------------------------------------------------------- tokens
def _tokens(text: str, formula: str) -> list[tokenize.TokenInfo]:
    """Python tokens of a one-line formula side (patsy uses Python's tokenizer too)."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError) as err:
        msg = err.args[0] if err.args else str(err)
        raise FormulaError(
            f"cannot parse formula {formula!r}: {msg}. Check the parentheses and quotes."
        ) from None
    return [
        t
        for t in toks
        if t.type
        not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)
    ]


def _q_name(toks: list[tokenize.TokenInfo], i: int) -> tuple[str, int] | None:
    """``Q("name")`` starting at token ``i``: the name and the index after ``)``."""
    if (
        i + 3 < len(toks)
        and toks[i].type == tokenize.NAME
        and toks[i].string == "Q"
        and toks[i + 1].string == "("
        and toks[i + 2].type == tokenize.STRING
        and toks[i + 3].string == ")"
    ):
        try:
            value = ast.literal_eval(toks[i + 2].string)
        except (ValueError, SyntaxError):
            return None
        if isinstance(value, str):
            return value, i + 4
    return None


def _referenced_columns(text: str, columns: list[str], formula: str) -> set[str]:
    """Columns a formula side mentions (bare names and ``Q("...")``)."""
    toks = _tokens(text, formula)
    out = set()
    for i, t in enumerate(toks):
        q = _q_name(toks, i)
        if q is not None and q[0] in columns:
            out.add(q[0])
        elif t.type == tokenize.NAME and t.string in columns:
            if i > 0 and toks[i - 1].string == ".":
                continue  # attribute, e.g. np.log
            out.add(t.string)
    return out


def _quote(name: str) -> str:
    if name.isidentifier() and not keyword.iskeyword(name) and name not in _FORMULA_FUNCS:
        return name
    return "Q(" + repr(name) + ")"


def _expand_dot(
    rhs: str, columns: list[str], exclude: set[str], formula: str
) -> tuple[str, list[str]]:
    """Rewrite ``.`` as the column list and apply ``- name`` removals to it; returns
    the text and the columns ``.`` stood for (none without a ``.``).

    Removals are applied here (not by patsy) so that columns named like Python
    keywords (``- class``) or quoted (``- Q("odd name")``) are found. A removed name
    that is not a column raises :class:`FormulaError`.
    """
    toks = _tokens(rhs, formula)
    # Where each token sits: at "formula level" (outside any function call) or not.
    level_ok: list[bool] = []
    stack: list[bool] = []  # True for a grouping paren, False for a call/subscript
    prev: tokenize.TokenInfo | None = None
    for t in toks:
        level_ok.append(all(stack))
        if t.type == tokenize.OP and t.string in "([{":
            is_call = prev is not None and (
                prev.type in (tokenize.NAME, tokenize.STRING, tokenize.NUMBER)
                or prev.string in ")]}"
            )
            stack.append(t.string == "(" and not is_call)
        elif t.type == tokenize.OP and t.string in ")]}" and stack:
            stack.pop()
        prev = t

    dots = []
    for i, t in enumerate(toks):
        if t.type != tokenize.OP or t.string != ".":
            continue
        before = toks[i - 1] if i > 0 else None
        if before is not None and (before.type != tokenize.OP or before.string in ")]}"):
            continue  # attribute access, e.g. np.log
        if not level_ok[i]:
            raise FormulaError(
                f"'.' (every column) must be a term of its own in {formula!r}, not inside a "
                f"function call; write the columns out, e.g. '~ np.log(a) + np.log(b)'."
            )
        dots.append(i)

    # "- name" / "- Q('name')" at formula level, followed by + - ) or the end.
    removals: list[tuple[int, int, str]] = []  # token span [start, stop) and the name
    for i, t in enumerate(toks):
        if not (t.type == tokenize.OP and t.string == "-" and level_ok[i]) or i + 1 >= len(toks):
            continue
        q = _q_name(toks, i + 1)
        if q is not None:
            name, stop = q
        elif toks[i + 1].type == tokenize.NAME and toks[i + 1].string not in _FORMULA_FUNCS:
            name, stop = toks[i + 1].string, i + 2
        else:
            continue
        if stop < len(toks) and toks[stop].string not in ("+", "-", ")"):
            continue  # "- f(x)", "- a.b", "- a:b": leave to patsy
        if name not in columns:
            raise FormulaError(
                f"cannot remove {name!r} in {formula!r}: there is no such column. "
                f"Available columns: {columns}."
            )
        removals.append((i, stop, name))

    if not dots:
        return rhs, []
    removed = {name for _, _, name in removals}
    cols = [c for c in columns if c not in exclude and c not in removed]
    if not cols:
        if not columns:
            what = " (the data has no columns)"
        elif exclude and removed:
            what = " after removing the response and the '- name' terms"
        elif exclude:
            what = " after removing the response"
        else:
            what = " after removing the '- name' terms"
        raise FormulaError(
            f"'.' in {formula!r} expands to no columns{what}. Keep at least one "
            f"column to cluster on."
        )
    expansion = "(" + " + ".join(_quote(c) for c in cols) + ")"
    # Rebuild the text from character spans (single line: columns are offsets).
    edits: list[tuple[int, int, str]] = [
        (toks[i].start[1], toks[i].end[1], expansion) for i in dots
    ]
    edits += [(toks[a].start[1], toks[b - 1].end[1], "") for a, b, _ in removals]
    out = rhs
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    return out, cols


# -------------------------------------------------------------------------- naming
def _fix_keywords(code: str, columns: list[str]) -> str:
    """Write columns named like Python keywords (``class``) as ``Q('class')``."""
    try:
        ast.parse(code, mode="eval")
        return code
    except SyntaxError:
        pass
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    out = code
    for t in reversed(toks):
        if t.type == tokenize.NAME and keyword.iskeyword(t.string) and t.string in columns:
            out = out[: t.start[1]] + "Q(" + repr(t.string) + ")" + out[t.end[1] :]
    return out


def _term_name(code: str) -> str:
    """Variable name for a term: the column for ``x``, ``C(x)``, ``N(x)``, ``Q("x")``.

    Examples
    --------
    >>> [_term_name(c) for c in ["x", "C(x, levels=[1, 2])", "N(Q('a b'))", "np.log(x)"]]
    ['x', 'x', 'a b', 'np.log(x)']
    """
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return code.strip()
    src = code.strip()
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("C", "N")
        and node.args
    ):
        inner = node.args[0]
        src = ast.get_source_segment(code.strip(), inner) or src
        node = inner
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "Q"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    if isinstance(node, ast.Name):
        return node.id
    return src


def _variable_name(code: str, columns: list[str]) -> str:
    """:func:`_term_name` of a code that may use keyword-named columns bare."""
    fixed = _fix_keywords(code, columns)
    name = _term_name(fixed)
    if fixed == code or name in columns:
        return name
    for c in columns:
        if keyword.iskeyword(c):
            name = name.replace("Q(" + repr(c) + ")", c)
    return name


# ----------------------------------------------------------------------- evaluation
class _ModuleRef:
    """A module kept by name in a stored formula namespace (picklable)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<module {self.name}>"


def capture_env(
    codes: list[str], env: dict[str, Any] | None, columns: list[str] | None = None
) -> dict[str, Any]:
    """The part of ``env`` that the term ``codes`` use (modules kept by name).

    Names of data ``columns`` are left out: the data wins over the namespace.
    """
    if not env:
        return {}
    used: set[str] = set()
    for code in codes:
        try:
            tree = ast.parse(code, mode="eval")
        except SyntaxError:
            continue
        used |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    out: dict[str, Any] = {}
    for name in sorted(used):
        if (
            name in env
            and name not in _FORMULA_FUNCS
            and name != "__builtins__"
            and name not in (columns or ())
        ):
            value = env[name]
            out[name] = _ModuleRef(value.__name__) if isinstance(value, types.ModuleType) else value
    return out


def _resolve_env(env: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in (env or {}).items():
        out[name] = importlib.import_module(value.name) if isinstance(value, _ModuleRef) else value
    return out


def evaluate_terms(
    codes: dict[str, str],
    data: pd.DataFrame,
    *,
    eval_env: dict[str, Any] | None = None,
    formula: str | None = None,
    what: str = "data",
) -> tuple[dict[str, pd.Series], dict[str, str], dict[str, Any]]:
    """Evaluate term codes (name -> code) on ``data``.

    Returns the columns, the forced kinds (``C()``/``N()``) and the levels fixed by
    ``C(x, levels=...)``, all keyed by variable name. ``what`` names the data in
    messages (``"data"`` or ``"newdata"``).
    """
    columns = [str(c) for c in data.columns]
    dups = {c for c in columns if columns.count(c) > 1}
    namespace: dict[str, Any] = {}
    for c in data.columns:
        name = str(c)
        if name not in dups and name not in _FORMULA_FUNCS:
            namespace[name] = data[c]
    env: dict[str, Any] = {"np": np, "pd": pd, "__builtins__": builtins}
    env.update(_resolve_env(eval_env))
    env.update({"C": C, "N": N, "I": I, "Q": lambda name: _q(data, name, dups, what)})
    where = f" in {formula!r}" if formula else ""

    def _eval(code: str) -> Any:
        try:
            return eval(code, env, namespace)  # noqa: S307 - formula evaluation by design
        except NameError as err:
            name = getattr(err, "name", None) or str(err)
            if name in dups:
                raise FormulaError(
                    f"column {name!r} appears more than once in {what}; rename the duplicates "
                    f"so each column name is unique."
                ) from None
            raise FormulaError(
                f"unknown name {name!r} in term {code!r}{where}: it is neither a column of "
                f"{what} nor defined in the caller's namespace. Available columns: {columns}. "
                f'Write names that are not identifiers as Q("name").'
            ) from None
        except FormulaError:
            raise
        except Exception as err:  # noqa: BLE001 - report any evaluation failure clearly
            raise FormulaError(
                f"cannot evaluate term {code!r}{where}: {type(err).__name__}: {err}"
            ) from None

    cols: dict[str, pd.Series] = {}
    forced: dict[str, str] = {}
    levels: dict[str, Any] = {}
    for name, code in codes.items():
        val = _eval(_fix_keywords(code, columns))
        if isinstance(val, _Forced):
            forced[name] = val.kind
            if val.levels is not None:
                levels[name] = val.levels
            val = val.values
        cols[name] = _as_series(val, data.index, name, code)
    return cols, forced, levels


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
    >>> evaluate_formula("~ a:b", df)
    Traceback (most recent call last):
    ...
    sparseclust.exceptions.FormulaError: interaction term 'a:b' in '~ a:b' is not supported: clustering selects whole variables. Create the combined column first, e.g. df['a_b'] = df['a'].astype(str) + '_' + df['b'].astype(str).
    """
    import patsy

    if not isinstance(formula, str):
        raise TypeError(f"formula must be a string such as '~ x1 + C(x2)'; got {formula!r}.")
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"A formula needs data= as a pandas DataFrame; got data of type "
            f"{type(data).__name__}. Wrap it first, e.g. data=pd.DataFrame(...)."
        )
    if "~" not in formula:
        raise FormulaError(
            f"formula {formula!r} has no '~'. Write a one-sided formula such as '~ x1 + C(x2)'."
        )
    text = " ".join(formula.splitlines())
    lhs_text, rhs_text = (part.strip() for part in text.split("~", 1))
    columns = [str(c) for c in data.columns]
    if lhs_text and not response:
        raise FormulaError(
            f"clustering formulas are one-sided; got a left-hand side in {formula!r}. "
            f"Use '~ {rhs_text}'."
        )
    if not rhs_text:
        raise FormulaError(f"formula {formula!r} has no right-hand side; use e.g. '~ .'.")
    exclude = _referenced_columns(lhs_text, columns, formula) if lhs_text else set()
    rhs_text, dotted = _expand_dot(rhs_text, columns, exclude, formula)
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
        raise FormulaError(
            f"formula {formula!r} selects no variables; name at least one, e.g. '~ .'."
        )

    codes: dict[str, str] = {}
    for t in terms:
        code = t.factors[0].code
        name = _variable_name(code, columns)
        if name in codes:
            raise FormulaError(
                f"variable {name!r} appears twice in {formula!r} (as {codes[name]!r} and "
                f"{code!r}); keep one term per variable."
            )
        codes[name] = code

    resp = None
    resp_code = None
    if lhs_text:
        lhs_terms = [t for t in desc.lhs_termlist if len(t.factors) > 0]
        if len(lhs_terms) != 1 or len(lhs_terms[0].factors) != 1:
            raise FormulaError(
                f"the left-hand side of {formula!r} must be one variable (the response), "
                f"e.g. 'y ~ .'."
            )
        resp_code = lhs_terms[0].factors[0].code
        resp_name = _variable_name(resp_code, columns)
        if resp_name in codes:
            raise FormulaError(
                f"{resp_name!r} is both the response and a variable in {formula!r}; "
                f"remove it from the right-hand side."
            )
        cols, _, _ = evaluate_terms(
            {resp_name: resp_code}, data, eval_env=eval_env, formula=formula
        )
        resp = cols[resp_name]

    cols, forced, levels = evaluate_terms(codes, data, eval_env=eval_env, formula=formula)
    variables = pd.DataFrame(cols, index=data.index)
    env = capture_env([*codes.values(), *([resp_code] if resp_code else [])], eval_env, columns)
    dotted = tuple(c for c in dotted if c in codes and codes[c] in (c, _quote(c)))
    return ParsedFormula(
        formula, variables, forced, levels, resp, codes, resp_code, env, dotted=dotted
    )


def _q(data: pd.DataFrame, name: str, dups: set[str], what: str) -> pd.Series:
    if name in dups:
        raise FormulaError(
            f"column {name!r} appears more than once in {what}; rename the duplicates so each "
            f"column name is unique."
        )
    for c in data.columns:
        if str(c) == name:
            return data[c]
    raise FormulaError(
        f"Q({name!r}): no such column in {what}. Available columns: "
        f"{[str(c) for c in data.columns]}."
    )


def _as_series(val: Any, index: pd.Index, name: str, code: str) -> pd.Series:
    if isinstance(val, pd.DataFrame):
        if val.shape[1] != 1:
            raise FormulaError(
                f"term {code!r} evaluates to {val.shape[1]} columns; use one term per column."
            )
        val = val.iloc[:, 0]
    if isinstance(val, pd.Series):
        if len(val) != len(index):
            raise FormulaError(
                f"term {code!r} has length {len(val)}, but the data has {len(index)} rows."
            )
        if not val.index.equals(index):
            if (
                val.index.is_unique
                and index.is_unique
                and val.index.sort_values().equals(index.sort_values())
            ):
                val = val.reindex(index)
            else:
                raise FormulaError(
                    f"term {code!r} returned a Series whose index does not match the data's "
                    f"index; return values in the data's row order (e.g. with .to_numpy())."
                )
        return val.rename(name)
    if isinstance(val, pd.Categorical | pd.api.extensions.ExtensionArray):
        if len(val) != len(index):
            raise FormulaError(
                f"term {code!r} has length {len(val)}, but the data has {len(index)} rows."
            )
        return pd.Series(val, index=index, name=name)
    arr = np.asarray(val)
    if arr.ndim == 0:
        raise FormulaError(
            f"term {code!r} evaluates to a single value, not a column; clustering needs one "
            f"value per row."
        )
    if arr.ndim > 1:
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        else:
            raise FormulaError(
                f"term {code!r} evaluates to an array of shape {arr.shape}; use one term per "
                f"column."
            )
    if len(arr) != len(index):
        raise FormulaError(
            f"term {code!r} has length {len(arr)}, but the data has {len(index)} rows."
        )
    return pd.Series(arr, index=index, name=name)
