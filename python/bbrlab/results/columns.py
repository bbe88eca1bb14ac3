"""A run's table as the core hands it over: numpy columns, categorical ones as codes and labels.

Why not a pandas DataFrame from the start: importing pandas costs about half a second, most of a
tiny run's wall time, and `bbrlab run` needs none of it — the summary is arithmetic over a few
columns, the Parquet files are written by pyarrow, and the plots read numpy arrays. A
:class:`Table` is what :class:`bbrlab.Result` keeps; its DataFrames (``Result.flows`` …) are built
from it on first use, sharing the numeric columns' memory.

A categorical column (the core's ``*_code`` columns: ``cc``, ``phase``, ``queue``; ``ca_state``)
holds integer codes into its labels, ``-1`` for a missing value — pandas' own convention, so the
conversion to ``pd.Categorical`` copies nothing but the labels.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import SimulationError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["Table"]


@dataclass
class Table:
    """Columns in order (``{name: 1-d array}``, all the same length); ``categories`` names the
    categorical ones and their labels (their arrays hold the codes)."""

    columns: dict[str, np.ndarray] = field(default_factory=dict)
    categories: dict[str, tuple[str, ...]] = field(default_factory=dict)

    # ------------------------------------------------------------ construction

    @classmethod
    def from_core(cls, name: str, columns: Mapping[str, Any], labels: Mapping[str, Sequence[str]]) -> Table:
        """The core's ``{column: (dtype, bytes)}`` for table ``name``; ``X_code`` columns become
        categorical column ``X`` with the labels ``labels[X]``. A malformed column (unreadable,
        of another length, codes outside its labels) is a SimulationError naming it."""
        table = cls()
        length: int | None = None
        for col, spec in columns.items():
            try:
                dtype, buf = spec
                arr = np.frombuffer(buf, dtype=np.dtype(dtype))
            except (TypeError, ValueError) as e:
                raise SimulationError(f"the core returned an unreadable column {name}.{col}: {e}") from None
            if length is None:
                length = len(arr)
            elif len(arr) != length:
                raise SimulationError(f"the core returned {name}.{col} with {len(arr)} rows, expected {length}")
            if col.endswith("_code"):
                key = col[: -len("_code")]
                cats = tuple(str(c) for c in labels.get(key, ()))
                codes = arr.astype(np.int64)
                if codes.size and (codes.min() < 0 or codes.max() >= len(cats)):
                    raise SimulationError(
                        f"the core returned {name}.{col} codes outside labels.{key} ({len(cats)} labels)"
                    )
                table.set(key, codes, categories=cats)
            else:
                table.set(col, arr)
        return table

    @classmethod
    def from_pandas(cls, frame: pd.DataFrame) -> Table:
        """A DataFrame's columns (categoricals as codes + labels; the numeric ones not copied)."""
        table = cls()
        for col in frame.columns:
            series = frame[col]
            cat = getattr(series, "cat", None)
            if cat is not None:
                table.set(
                    str(col), np.asarray(cat.codes, dtype=np.int64), categories=tuple(str(c) for c in cat.categories)
                )
            else:
                table.set(str(col), series.to_numpy())
        return table

    def set(self, name: str, values: Any, *, categories: Sequence[str] | None = None, after: str | None = None) -> None:
        """Add or replace column ``name`` (codes when ``categories`` is given), at the end or just
        after column ``after``."""
        arr = np.asarray(values)
        if self.columns and name not in self.columns and len(arr) != len(self):
            raise ValueError(f"column {name} has {len(arr)} rows, the table {len(self)}")
        self.categories.pop(name, None)
        if categories is not None:
            self.categories[name] = tuple(categories)
        if after is None or name in self.columns:
            self.columns[name] = arr
            return
        items = list(self.columns.items())
        at = [k for k, _ in items].index(after) + 1
        self.columns = dict(items[:at] + [(name, arr)] + items[at:])

    # ------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __contains__(self, name: object) -> bool:
        return name in self.columns

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __getitem__(self, name: str) -> np.ndarray:
        """A column's values: numbers as stored; a categorical's labels (object array, "" where
        the value is missing)."""
        arr = self.columns[name]
        cats = self.categories.get(name)
        if cats is None:
            return arr
        labels = np.asarray([*cats, ""], dtype=object)
        return labels[arr]  # code -1 (missing) indexes the trailing ""

    def codes(self, name: str) -> np.ndarray:
        """A categorical column's codes (the column itself when it is not categorical)."""
        return self.columns[name]

    def rows(self, mask: np.ndarray) -> Table:
        """The rows where ``mask`` is true."""
        return Table({k: v[mask] for k, v in self.columns.items()}, dict(self.categories))

    # ------------------------------------------------------------ conversion

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        data: dict[str, Any] = {}
        for name, arr in self.columns.items():
            cats = self.categories.get(name)
            data[name] = (
                arr if cats is None else pd.Categorical.from_codes(arr, categories=pd.Index(list(cats), dtype=object))
            )
        return pd.DataFrame(data)

    def to_arrow(self) -> pa.Table:
        """An Arrow table of the same columns: categoricals as dictionary arrays (what pandas writes
        for a categorical, so ``pd.read_parquet`` reads them back as categoricals).

        Built from the arrays' buffers (``pa.Array.from_buffers``): ``pa.array`` on a numpy array
        imports pandas to ask whether it is a pandas object, which alone costs `bbrlab run` 0.5 s."""
        import pyarrow as pa

        arrays, names = [], []
        for name, arr in self.columns.items():
            cats = self.categories.get(name)
            if cats is None:
                arrays.append(_arrow_numbers(arr))  # NaN stays a float value, as pandas writes it
            else:
                codes = np.ascontiguousarray(arr, dtype=_code_dtype(len(cats)))
                arrays.append(
                    pa.DictionaryArray.from_arrays(_arrow_numbers(codes, valid=codes >= 0), _arrow_strings(cats))
                )
            names.append(name)
        return pa.Table.from_arrays(arrays, names=names)

    def write_parquet(self, path: str | Path) -> None:
        import pyarrow.parquet as pq

        pq.write_table(self.to_arrow(), str(path))


def _arrow_numbers(arr: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """A numeric or boolean numpy column as an Arrow array sharing its memory (``valid``: where
    the values are not null)."""
    import pyarrow as pa

    arr = np.ascontiguousarray(arr)
    if arr.dtype == np.bool_:
        arrow_type, data = pa.bool_(), np.packbits(arr, bitorder="little")  # Arrow booleans are bits
    else:
        try:
            arrow_type, data = getattr(pa, _ARROW_TYPES[arr.dtype.str.lstrip("<=|")])(), arr
        except KeyError:
            raise TypeError(f"no Arrow type for a column of {arr.dtype}") from None
    mask = None if valid is None or valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(arrow_type, len(arr), [mask, pa.py_buffer(data)])


def _arrow_strings(values: Sequence[str]) -> pa.Array:
    """Strings as an Arrow utf8 array (offsets and bytes)."""
    import pyarrow as pa

    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return pa.Array.from_buffers(
        pa.string(), len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    )


#: numpy dtype (without byte order) → the pyarrow type of that name.
_ARROW_TYPES = {
    "i1": "int8",
    "i2": "int16",
    "i4": "int32",
    "i8": "int64",
    "u1": "uint8",
    "u2": "uint16",
    "u4": "uint32",
    "u8": "uint64",
    "f4": "float32",
    "f8": "float64",
}


def _code_dtype(n_labels: int) -> np.dtype:
    """The narrowest signed integer that holds codes 0..n_labels-1 and -1 (as pandas stores them)."""
    for dt in (np.int8, np.int16, np.int32):
        if n_labels <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.int64)
