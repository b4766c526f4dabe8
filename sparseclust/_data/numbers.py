"""Numbers stored as text, read as R's ``readr::parse_number`` reads them: grouping
marks, currency signs, a percent sign, a unit after the number, the decimal comma where
it is unambiguous. Used by the screen (:mod:`.screen`) and by ``numeric=`` on text
columns (:func:`~sparseclust._data.dtypes.to_float`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["NA_TEXT", "column_unit", "parse_numbers"]

#: Text that means "missing" in exported tables (compared lower-cased, stripped).
NA_TEXT = frozenset(
    {"", "na", "n/a", "nan", "null", "none", "-", "--", "?", ".", "missing", "#n/a", "n.a."}
)

_CURRENCY = "$€£¥₹"
_SPACES = "\u00a0\u202f\u2009 "
# the number's body under each convention: (grouping marks, decimal mark)
_BODY = {
    ".": r"(?:\d{1,3}(?:[,'\u00a0\u202f\u2009 ]\d{3})+|\d+)?(?:\.\d+)?(?:[eE][+-]?\d+)?",
    ",": r"(?:\d{1,3}(?:[.'\u00a0\u202f\u2009 ]\d{3})+|\d+)?(?:,\d+)?",
}


def _clean(text: pd.Series) -> pd.Series:
    """Text stripped of spaces, currency signs, a percent sign and accounting parentheses
    (``"(1,234)"`` is -1234), lower-cased is not needed (digits only)."""
    t = text.str.strip(_SPACES)
    neg = t.str.startswith("(") & t.str.endswith(")")
    t = t.where(~neg, "-" + t.str.slice(1, -1))
    t = t.str.replace(f"[{re.escape(_CURRENCY)}%]", "", regex=True).str.strip(_SPACES)
    # a sign before a currency sign: "-$12" -> "-12" (the sign kept, spaces dropped)
    return t.str.replace(r"^([+-])[\s\u00a0]+", r"\1", regex=True)


_UNIT = re.compile(r"^.*\d[.,]?\s*([A-Za-z\u00b5\u00b0][A-Za-z/\u00b5\u00b0\u00b2\u00b3.]*)$")


def column_unit(values: Sequence[Any]) -> str | None:
    """The unit written after the numbers of a text column (``"3,750 g"``: ``"g"``),
    when every value that has one has the same and at least half the values have it;
    else ``None`` (several units, as ``"3 kg"`` beside ``"500 g"``, are not converted).

    Examples
    --------
    >>> column_unit(["3,750 g", "4,100 g", "n/a"]), column_unit(["3 kg", "500 g"])
    ('g', None)
    >>> column_unit(["C17", "C18"]) is None  # a prefix is not a unit
    True
    """
    units = [m.group(1) for v in values if isinstance(v, str) and (m := _UNIT.match(v.strip()))]
    present = [v for v in values if isinstance(v, str) and v.strip()]
    if not units or len(set(units)) > 1 or 2 * len(units) < len(present):
        return None
    return units[0]


def parse_numbers(
    values: Sequence[str] | pd.Series, decimal: str | None = None, unit: str | None = None
) -> tuple:
    """Each text value as a number (NaN where it is not one), and the decimal mark used.

    ``decimal=None`` chooses between ``"."`` (grouping marks ``,``, ``'`` or spaces) and
    ``","`` (grouping marks ``.``, ``'`` or spaces): the one that reads more values, the
    point on a tie (readr's default locale). Currency signs (``$ € £ ¥ ₹``), a percent
    sign (``"12%"`` is 12, as ``readr::parse_number`` reads it), surrounding spaces and
    accounting parentheses are removed first, and ``unit`` (see :func:`column_unit`)
    after the number.

    Returns
    -------
    tuple
        ``(numbers, decimal)``: a float64 array (NaN where a value did not parse) and the
        decimal mark.

    Examples
    --------
    >>> x, dec = parse_numbers(["12,345.6", "$1,200", "7%", " 3 ", "n/a"])
    >>> x.tolist(), dec
    ([12345.6, 1200.0, 7.0, 3.0, nan], '.')
    >>> parse_numbers(["12,5", "3,25", "1.234,5"])
    (array([  12.5 ,    3.25, 1234.5 ]), ',')
    >>> parse_numbers(["3,750 g", "4,100 g"], unit="g")[0].tolist()
    [3750.0, 4100.0]
    """
    text = pd.Series(list(values) if not isinstance(values, pd.Series) else values.to_numpy())
    text = text.astype(object).where(text.map(lambda v: isinstance(v, str)), None)
    text = text.astype("string")
    if unit:
        text = text.str.replace(r"\s*" + re.escape(unit) + r"\s*$", "", regex=True)
    clean = _clean(text)
    out = {}
    for dec in [decimal] if decimal else [".", ","]:
        ok = clean.str.fullmatch(r"[+-]?" + _BODY[dec]).fillna(False).to_numpy(dtype=bool)
        ok &= clean.str.contains(r"\d", regex=True).fillna(False).to_numpy(dtype=bool)
        body = clean.where(ok, None)
        group = r"[,'\u00a0\u202f\u2009 ]" if dec == "." else r"[.'\u00a0\u202f\u2009 ]"
        body = body.str.replace(group, "", regex=True)
        if dec == ",":
            body = body.str.replace(",", ".", regex=False)
        out[dec] = pd.to_numeric(body, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    if decimal:
        return out[decimal], decimal
    n_point, n_comma = (int(np.isfinite(out[d]).sum()) for d in (".", ","))
    dec = "," if n_comma > n_point else "."
    return out[dec], dec
