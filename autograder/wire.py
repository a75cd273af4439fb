"""The data-only encoding of everything that crosses between the sandbox, the judge and the grader.

A value travels as JSON with a small typed schema, and reading it can build
nothing but data: there is no class name to resolve, no constructor to call
that is not listed here, no reference to share.

=========================  ==========================================================
JSON                       value
=========================  ==========================================================
``null true false``        ``None``, ``True``, ``False``
a number                   ``int`` (at most :data:`MAX_INT_DIGITS` digits) or ``float``
a string                   ``str``
an array                   ``list``
``{"float": "nan"}``       ``nan``, ``inf``, ``-inf``
``{"complex": [re, im]}``  ``complex``
``{"bytes": "<base64>"}``  ``bytes``
``{"tuple": [...]}``       ``tuple``; also ``set``, ``frozenset``
``{"dict": [[k, v], ..]}`` ``dict`` (keys of any hashable kind: ``1``, ``(0, 1)``, ``nan``)
``{"ndarray": [dtype, shape, "<base64>"]}``  a NumPy array; dtype from :data:`DTYPES`
``{"masked": [data, mask]}``  a NumPy masked array (two arrays of one shape)
``{"record": [name, [[field, value], ..]]}``  a record of :data:`RECORDS`, rebuilt by
                           the reader's own constructor from validated fields
=========================  ==========================================================

Every other JSON object is refused.  The writer (:func:`encode`, run where
the value lives: in the sandbox for a student's value) converts what it can
into these kinds -- a ``defaultdict``, ``OrderedDict`` or ``Counter`` into a
``dict``, a ``deque`` into a ``list``, a ``namedtuple`` into a ``tuple``, a
``Fraction`` or ``Decimal`` into a ``float``, NumPy scalars into Python
numbers -- and refuses the rest with :class:`Ungradable`, naming the type.
A value written twice is written twice (no shared references): a small
value that refers to itself many times grows until the writer's limits stop
it.

The reader (:func:`decode`; :func:`parse_json` for plain JSON frames) checks
the limits **while reading**, before it builds anything that could exceed
them: the total size first, then the number of values and the nesting depth
(counted outside strings, a linear scan), then, as the C JSON scanner meets
them, the size of each number and the kind of each tagged object, which is
built the moment it is read.  No input makes it hold more than a small
multiple of what :class:`Limits` allows.

>>> import math
>>> decode(encode({"a": [1, 2.5, (3, None)], 7: {"x"}, "n": math.inf}))
{'a': [1, 2.5, (3, None)], 7: {'x'}, 'n': inf}
>>> decode(b'{"code": "os.system"}')
Traceback (most recent call last):
...
autograder.wire.WireError: unknown kind 'code' (allowed: bytes, complex, dict, float, frozenset, masked, ndarray, record, set, tuple)
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re

__all__ = ["encode", "encode_rows", "Rows", "decode", "parse_json", "dumps_json", "Limits", "WireError", "Ungradable",
           "DTYPES", "RECORDS", "MAX_INT_DIGITS"]

#: NumPy dtypes an array may have (little-endian; one-byte types have no order).
DTYPES = ("|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8",
          "<f2", "<f4", "<f8", "<c8", "<c16")
#: Longest integer (decimal digits) a value may hold: floats end at 309 digits.
MAX_INT_DIGITS = 400
_MAX_NDIM = 32
_TAGS = ("bytes", "complex", "dict", "float", "frozenset", "masked", "ndarray", "record", "set",
         "tuple")


class WireError(ValueError):
    """The text is not a value of the schema, or it is larger than the limits allow."""


class Ungradable(TypeError):
    """The writer met a value it cannot express as data (the message names its type)."""


class Limits:
    """What one text may hold: checked while it is read (and while it is written)."""

    __slots__ = ("max_bytes", "max_depth", "max_items")

    def __init__(self, max_bytes: int = 64 * 2**20, max_depth: int = 64, max_items: int = 1_000_000):
        self.max_bytes, self.max_depth, self.max_items = int(max_bytes), int(max_depth), int(max_items)

    def __repr__(self):
        return f"Limits(max_bytes={self.max_bytes}, max_depth={self.max_depth}, max_items={self.max_items})"


# ---------------------------------------------------------------------------
# records: course_lib results and networkx graphs, by an explicit registry
# ---------------------------------------------------------------------------
def _fields(obj, names):
    return [[n, getattr(obj, n)] for n in names]


def _graph_out(g):
    return [["graph", dict(g.graph)], ["nodes", [[n, dict(a)] for n, a in g.nodes(data=True)]],
            ["edges", [[u, v, dict(a)] for u, v, a in g.edges(data=True)]]]


def _graph_in(kind):
    def build(f):
        import networkx as nx
        g = getattr(nx, kind)()
        g.graph.update(_check(f["graph"], dict, "graph"))
        for item in _check(f["nodes"], list, "nodes"):
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], dict)):
                raise WireError("a graph node must be [node, attributes]")
            g.add_node(item[0], **{str(k): v for k, v in item[1].items()})
        for item in _check(f["edges"], list, "edges"):
            if not (isinstance(item, list) and len(item) == 3 and isinstance(item[2], dict)):
                raise WireError("a graph edge must be [u, v, attributes]")
            g.add_edge(item[0], item[1], **{str(k): v for k, v in item[2].items()})
        return g
    return build


def _check(value, kinds, what):
    if not isinstance(value, kinds) or (kinds in (int, float) and isinstance(value, bool)):
        raise WireError(f"field {what!r} has the wrong kind ({type(value).__name__})")
    return value


def _fit_in(f):
    from course_lib.measure.harness import AlphaBetaFit
    import numpy as np
    for k in ("alpha_s", "bw_bytes_per_s", "r_squared"):
        _check(f[k], (int, float), k)
    for k in ("residuals_s", "relative_residuals"):
        if not isinstance(f[k], (list, np.ndarray)):
            raise WireError(f"field {k!r} has the wrong kind ({type(f[k]).__name__})")
    if f["weighting"] is not None:
        _check(f["weighting"], str, "weighting")
    return AlphaBetaFit(f["alpha_s"], f["bw_bytes_per_s"], f["r_squared"], f["residuals_s"],
                        f["relative_residuals"], f["weighting"])


def _dataclass_in(path, kinds):
    def build(f):
        module, name = path.rsplit(".", 1)
        import importlib
        cls = getattr(importlib.import_module(module), name)
        for k, want in kinds.items():
            if want is not None and not (f[k] is None and type(None) in want):
                _check(f[k], tuple(w for w in want if w is not type(None)), k)
        return cls(**f)
    return build


_NONE = type(None)
_LAB = {"name": (str,), "records": (list,), "fits": (dict,), "summary": (dict,),
        "metadata": (dict,), "notes": (list,), "skipped": (str, _NONE), "plot_y": (str,)}
_TIMING = {"samples_s": (list,), "median_s": (int, float), "q1_s": (int, float),
           "q3_s": (int, float), "min_s": (int, float), "max_s": (int, float),
           "n_repeats": (int,), "budget_exhausted": (bool,)}

#: name -> (module and class of the value, its fields, writer, reader).  Only these
#: records cross; the reader builds them with the grader's own code from checked fields.
RECORDS = {
    "AlphaBetaFit": ("course_lib.measure.harness.AlphaBetaFit",
                     ("alpha_s", "bw_bytes_per_s", "r_squared", "residuals_s",
                      "relative_residuals", "weighting"),
                     lambda o: _fields(o, RECORDS["AlphaBetaFit"][1]), _fit_in),
    "LabResult": ("course_lib.measure.harness.LabResult", tuple(_LAB),
                  lambda o: _fields(o, tuple(_LAB)),
                  _dataclass_in("course_lib.measure.harness.LabResult", _LAB)),
    "Timing": ("course_lib.measure.harness.Timing", tuple(_TIMING),
               lambda o: _fields(o, tuple(_TIMING)),
               _dataclass_in("course_lib.measure.harness.Timing", _TIMING)),
    "Graph": ("networkx.classes.graph.Graph", ("graph", "nodes", "edges"), _graph_out,
              _graph_in("Graph")),
    "DiGraph": ("networkx.classes.digraph.DiGraph", ("graph", "nodes", "edges"), _graph_out,
                _graph_in("DiGraph")),
}
_BY_TYPE = {path: name for name, (path, *_rest) in RECORDS.items()}


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------
class _Writer:
    def __init__(self, limits, default):
        self.limits, self.default = limits, default
        self.items = 0
        self.size = 0
        self.out = []

    def put(self, text):
        self.size += len(text)
        if self.size > self.limits.max_bytes:
            raise Ungradable(f"the value is larger than {self.limits.max_bytes:,} bytes as data")
        self.out.append(text)

    def seq(self, tag, items, depth):
        """A JSON array at ``depth`` (inside ``{"tag": ...}`` when ``tag``)."""
        self.put('{"%s":[' % tag if tag else "[")
        inner = depth + (2 if tag else 1)
        first = True
        for item in items:
            if not first:
                self.put(",")
            first = False
            self.value(item, inner)
        self.put("]}" if tag else "]")

    def value(self, v, depth):  # noqa: C901 - one branch per kind of the schema
        """``v`` at JSON nesting ``depth`` (the reader allows ``max_depth``; an array of
        a masked array needs 6 levels of its own)."""
        self.items += 1
        if self.items > self.limits.max_items:
            raise Ungradable(f"the value holds more than {self.limits.max_items:,} items")
        if depth + 6 > self.limits.max_depth:
            raise Ungradable(f"the value is nested deeper than {self.limits.max_depth - 6} levels")
        t = type(v)
        if t is float and v - v == 0:          # the common kinds first (finite floats)
            return self.put(repr(v))
        if t is str:
            return self.put(json.dumps(v))
        if t is int and -2**62 < v < 2**62:
            return self.put(str(v))
        if t is list:
            return self.seq("", v, depth)
        mod = getattr(t, "__module__", "") or ""
        if v is None or v is True or v is False:
            return self.put("null" if v is None else "true" if v else "false")
        name = _BY_TYPE.get(f"{mod}.{t.__qualname__}")
        if name is not None:
            self.put('{"record":[%s,' % json.dumps(name))
            self.seq("", RECORDS[name][2](v), depth + 2)
            return self.put("]}")
        if mod.startswith("numpy"):
            return self.numpy(v, depth)
        if isinstance(v, bool):
            return self.put("true" if v else "false")
        if isinstance(v, int):
            v = int(v)
            if v.bit_length() > MAX_INT_DIGITS * 3.32:
                raise Ungradable(f"an integer of more than {MAX_INT_DIGITS} digits cannot be graded")
            return self.put(str(v))
        if isinstance(v, float):
            return self.float(float(v))
        if isinstance(v, complex):
            self.put('{"complex":[')
            self.float(v.real)
            self.put(",")
            self.float(v.imag)
            return self.put("]}")
        if isinstance(v, str):
            return self.put(json.dumps(str.__str__(v)))
        if isinstance(v, (bytes, bytearray, memoryview)):
            return self.put('{"bytes":"%s"}' % base64.b64encode(bytes(v)).decode("ascii"))
        if t.__name__ in ("Fraction", "Decimal") and mod in ("fractions", "decimal", "_pydecimal"):
            return self.float(float(v))
        if isinstance(v, dict):               # dict, defaultdict, OrderedDict, Counter, ...
            return self.seq("dict", ([k, x] for k, x in list(v.items())), depth)
        if isinstance(v, tuple):              # tuple, namedtuple
            return self.seq("tuple", tuple.__iter__(v), depth)
        if isinstance(v, list):
            return self.seq("", list.__iter__(v), depth)
        if t.__name__ == "deque" and mod == "collections":
            return self.seq("", iter(v), depth)
        if isinstance(v, frozenset):
            return self.seq("frozenset", frozenset.__iter__(v), depth)
        if isinstance(v, set):
            return self.seq("set", set.__iter__(v), depth)
        if self.default is not None:
            return self.value(self.default(v), depth)
        raise Ungradable(f"a value of type {t.__name__} cannot be graded")

    def float(self, f):
        if math.isfinite(f):
            return self.put(repr(f))
        return self.put('{"float":"%s"}' % ("nan" if f != f else "inf" if f > 0 else "-inf"))

    def numpy(self, v, depth):
        import numpy as np
        if isinstance(v, np.ma.MaskedArray):
            self.put('{"masked":[')
            self.numpy(np.ma.getdata(v), depth + 2)
            self.put(",")
            self.numpy(np.ma.getmaskarray(v), depth + 2)
            return self.put("]}")
        if isinstance(v, np.ndarray):
            a = v
            if a.dtype.kind in "biufc" and a.dtype.byteorder == ">":
                a = a.astype(a.dtype.newbyteorder("<"))
            if a.dtype.str not in DTYPES:
                raise Ungradable(f"a NumPy array of dtype {a.dtype} cannot be graded "
                                 "(numbers and booleans only)")
            if a.nbytes > self.limits.max_bytes:
                raise Ungradable(f"the value is larger than {self.limits.max_bytes:,} bytes as data")
            data = base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")
            return self.put('{"ndarray":[%s,%s,"%s"]}' % (json.dumps(a.dtype.str),
                                                           json.dumps(list(a.shape)), data))
        if isinstance(v, np.generic):         # NumPy scalars: Python numbers
            item = v.item()
            if isinstance(item, np.generic) or type(item).__module__.startswith("numpy"):
                raise Ungradable(f"a value of type {type(v).__name__} cannot be graded")
            return self.value(item, depth)
        raise Ungradable(f"a value of type {type(v).__name__} cannot be graded")


def encode(value, limits: Limits = Limits(), default=None) -> bytes:
    """``value`` as the schema's JSON (UTF-8), or raise :class:`Ungradable`.

    ``default(obj)`` may turn a value of another kind into one of the schema (or raise).

    >>> encode((1, 2.0, "x"))
    b'{"tuple":[1,2.0,"x"]}'
    """
    w = _Writer(limits, default)
    try:
        w.value(value, 0)
    except RecursionError:
        raise Ungradable(f"the value is nested deeper than {limits.max_depth} levels") from None
    return "".join(w.out).encode("utf-8")


class Rows:
    """One answer of the sandbox, row by row: ``["value", v]`` (``v`` written as data, or
    the row becomes ``["ungradable", why]``) or rows of plain strings and numbers
    (``["missing"]``, ``["error", name, message]``).  All rows share ``limits``."""

    def __init__(self, limits: Limits = Limits(), default=None):
        self.w = _Writer(limits, default)
        self.parts = []

    def add(self, row) -> None:
        w = self.w
        size, items = w.size, w.items
        w.out = []
        if row and row[0] == "value":
            try:
                w.put('["value",')
                w.value(row[1], 2)
                w.put("]")
                self.parts.append("".join(w.out))
                return
            except (Ungradable, RecursionError) as exc:
                w.size, w.items, w.out = size, items, []
                why = str(exc) if isinstance(exc, Ungradable) else "the value is nested too deeply"
                row = ["ungradable", why]
        w.put(json.dumps([x if isinstance(x, int) and not isinstance(x, bool) else str(x)[:2000]
                          for x in row], ensure_ascii=True, separators=(",", ":")))
        self.parts.append("".join(w.out))

    def text(self) -> bytes:
        return ("[" + ",".join(self.parts) + "]").encode("utf-8")


def encode_rows(rows, limits: Limits = Limits(), default=None) -> bytes:
    """:class:`Rows` at once.

    >>> encode_rows([["missing"], ["value", {1, 2}], ["value", object()]])
    b'[["missing"],["value",{"set":[1,2]}],["ungradable","a value of type object cannot be graded"]]'
    """
    out = Rows(limits, default)
    for row in rows:
        out.add(row)
    return out.text()


# ---------------------------------------------------------------------------
# reading: a small JSON parser that counts as it goes
# ---------------------------------------------------------------------------
def _build(tag, payload):  # noqa: C901 - one branch per kind of the schema
    if tag == "tuple":
        return tuple(_want_list(payload, tag))
    if tag in ("set", "frozenset"):
        try:
            return (set if tag == "set" else frozenset)(_want_list(payload, tag))
        except TypeError:
            raise WireError(f"a {tag} holds an unhashable value") from None
    if tag == "dict":
        out = {}
        for pair in _want_list(payload, tag):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise WireError("a dict item must be [key, value]")
            try:
                out[pair[0]] = pair[1]
            except TypeError:
                raise WireError("a dict key is unhashable") from None
        return out
    if tag == "float":
        if payload not in ("nan", "inf", "-inf"):
            raise WireError("a tagged float must be 'nan', 'inf' or '-inf'")
        return float(payload)
    if tag == "complex":
        p = _want_list(payload, tag)
        if len(p) != 2 or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in p):
            raise WireError("a complex must be [real, imag]")
        return complex(p[0], p[1])
    if tag == "bytes":
        return _b64(payload)
    if tag == "ndarray":
        return _array(payload)
    if tag == "masked":
        import numpy as np
        p = _want_list(payload, tag)
        if len(p) != 2 or not all(type(x) is np.ndarray for x in p) or p[0].shape != p[1].shape \
                or p[1].dtype != np.bool_:
            raise WireError("a masked array must be [data, boolean mask] of one shape")
        return np.ma.MaskedArray(p[0], mask=p[1])
    if tag == "record":
        p = _want_list(payload, tag)
        if len(p) != 2 or not isinstance(p[0], str) or not isinstance(p[1], list):
            raise WireError("a record must be [name, fields]")
        if p[0] not in RECORDS:
            raise WireError(f"unknown record {p[0][:40]!r} (allowed: {', '.join(sorted(RECORDS))})")
        _, names, _, build = RECORDS[p[0]]
        fields = {}
        for item in p[1]:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                raise WireError("a record field must be [name, value]")
            fields[item[0]] = item[1]
        if sorted(fields) != sorted(names):
            raise WireError(f"record {p[0]} needs exactly the fields {', '.join(names)}")
        try:
            return build(fields)
        except WireError:
            raise
        except Exception as exc:  # the constructor refused the fields
            raise WireError(f"record {p[0]}: {type(exc).__name__}: {str(exc)[:200]}") from None
    raise WireError(f"unknown kind {tag[:40]!r} (allowed: {', '.join(_TAGS)})")


def _want_list(p, tag):
    if not isinstance(p, list):
        raise WireError(f"a {tag} must hold a list")
    return p


def _b64(p):
    if not isinstance(p, str):
        raise WireError("bytes must be base64 text")
    try:
        return base64.b64decode(p, validate=True)
    except (binascii.Error, ValueError):
        raise WireError("bytes must be base64 text") from None


def _array(p):
    import numpy as np
    p = _want_list(p, "ndarray")
    if len(p) != 3 or p[0] not in DTYPES or not isinstance(p[1], list) or len(p[1]) > _MAX_NDIM \
            or not all(type(n) is int and n >= 0 for n in p[1]):
        raise WireError(f"an ndarray must be [dtype, shape, data] with a dtype of {', '.join(DTYPES)}")
    raw = _b64(p[2])
    dtype = np.dtype(p[0])
    count = 1
    for n in p[1]:
        count *= n
    if count * dtype.itemsize != len(raw):
        raise WireError("an ndarray's data does not match its shape and dtype")
    return np.frombuffer(raw, dtype=dtype).reshape(p[1]).copy()


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKET = re.compile(r"[][{}]")


def _prescan(text: str, limits: Limits) -> None:
    """Refuse ``text`` before anything is built if it holds more values, or nests deeper,
    than ``limits`` allow (counted outside strings: exact for JSON, never less)."""
    bare = _STRING.sub('""', text)
    count = bare.count(",") + bare.count(":") + bare.count("[") + bare.count("{") + 1
    if count > limits.max_items:
        raise WireError(f"more than {limits.max_items:,} values")
    depth = 0
    for m in _BRACKET.finditer(bare):
        if m.group() in "[{":
            depth += 1
            if depth > limits.max_depth:
                raise WireError(f"nested deeper than {limits.max_depth} levels")
        else:
            depth -= 1


def _int(token: str) -> int:
    if len(token) > MAX_INT_DIGITS + 1:
        raise WireError(f"a number of more than {MAX_INT_DIGITS} digits")
    return int(token)


def _float(token: str) -> float:
    if len(token) > MAX_INT_DIGITS + 30:
        raise WireError(f"a number of more than {MAX_INT_DIGITS} digits")
    return float(token)


def _constant(token: str):
    raise WireError(f"{token} is not JSON (write {{\"float\": \"nan\"}})")


def _tagged(pairs):
    if len(pairs) != 1:
        raise WireError("a tagged object has exactly one key" if pairs else "an empty object is not a value")
    return _build(*pairs[0])


_TYPED = json.JSONDecoder(object_pairs_hook=_tagged, parse_int=_int, parse_float=_float,
                          parse_constant=_constant)
_PLAIN = json.JSONDecoder(object_pairs_hook=dict, parse_int=_int, parse_float=_float,
                          parse_constant=_constant)


def _parse(text: str, limits: Limits, typed: bool):
    _prescan(text, limits)
    try:
        return (_TYPED if typed else _PLAIN).decode(text)
    except WireError:
        raise
    except RecursionError:  # pragma: no cover - the prescan bounds the depth
        raise WireError("nested too deeply") from None
    except ValueError as exc:
        raise WireError(f"not JSON ({str(exc)[:120]})") from None


def _text(data, limits: Limits) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if not isinstance(data, (bytes, bytearray)):
        raise WireError("not text")
    if len(data) > limits.max_bytes:
        raise WireError(f"{len(data):,} bytes: larger than {limits.max_bytes:,}")
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        raise WireError("not UTF-8 text (a pickle, or other bytes)") from None


def decode(data, limits: Limits = Limits()):
    """The value the schema's JSON ``data`` (bytes) stands for, or raise :class:`WireError`."""
    text = _text(data, limits)
    try:
        return _parse(text, limits, typed=True)
    except RecursionError:  # pragma: no cover - the parser does not recurse
        raise WireError("nested too deeply") from None


def parse_json(data, limits: Limits = Limits()):
    """Plain JSON (objects are dicts with string keys), read under ``limits``.

    >>> parse_json(b'{"a": [1, {"b": null}]}')
    {'a': [1, {'b': None}]}
    """
    return _parse(_text(data, limits), limits, typed=False)


def dumps_json(obj) -> bytes:
    """Plain JSON for a frame (no NaN, which JSON lacks)."""
    return json.dumps(obj, allow_nan=False, separators=(",", ":")).encode("utf-8")
