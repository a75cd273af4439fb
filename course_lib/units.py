"""Units: SI inside the code, human strings only at the edges.

Every quantity in ``course_lib`` is held in SI base units -- bytes, seconds,
bytes per second -- and the unit is the end of the name (``n_bytes``,
``latency_s``, ``bw_bytes_per_s``).  This module converts to and from the
strings people write ("25 GB/s", "400 Gb/s", "1 GiB", "2 us") and holds the
input checks every public function of the library uses, so that bad input
always gets the same kind of message: the parameter's name, what was given
and what is allowed.

Decimal and binary prefixes are kept apart: ``GB = 1e9`` bytes, ``GiB = 2**30``
bytes.  Bits and bytes are kept apart too: ``Gb/s`` (bits) is divided by 8,
``GB/s`` (bytes) is not -- a 400 Gb/s InfiniBand NDR port moves 50 GB/s in
each direction.

Taught in chapter 1 (units and directions) and used by every chapter.

Examples
--------
>>> parse_bandwidth("400 Gb/s")
50000000000.0
>>> parse_size("1 GiB")
1073741824.0
>>> format_bandwidth(450e9)
'450 GB/s'
>>> format_bytes(2**30, binary=True)
'1 GiB'
"""

from __future__ import annotations

import math
import numbers
import re

__all__ = [
    "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB",
    "BITS_PER_BYTE", "SPEED_OF_LIGHT_M_PER_S",
    "US", "NS", "MS",
    "parse_size", "parse_bandwidth", "parse_time",
    "format_bytes", "format_size", "format_bandwidth", "format_time", "format_count",
    "format_distance", "binary_size_ticks", "format_size_tick",
    "gbit_per_s", "gbyte_per_s",
    "check_positive", "check_nonnegative", "check_fraction", "check_int",
    "check_choice", "check_real",
]

# --- constants -------------------------------------------------------------
KB, MB, GB, TB = 1e3, 1e6, 1e9, 1e12
KiB, MiB, GiB, TiB = 2.0**10, 2.0**20, 2.0**30, 2.0**40
NS, US, MS = 1e-9, 1e-6, 1e-3
BITS_PER_BYTE = 8
#: Speed of light in vacuum, metres per second (exact, SI definition).
SPEED_OF_LIGHT_M_PER_S = 299_792_458.0

_DECIMAL = {"": 1.0, "k": KB, "K": KB, "M": MB, "G": GB, "T": TB, "P": 1e15}
_BINARY = {"Ki": KiB, "Mi": MiB, "Gi": GiB, "Ti": TiB}
_TIME = {"s": 1.0, "ms": MS, "us": US, "µs": US, "μs": US, "ns": NS,
         "min": 60.0, "h": 3600.0}


# --- checks ----------------------------------------------------------------
def check_real(value, name: str) -> float:
    """Return ``value`` as a finite float, or raise naming ``name``.

    >>> check_real(3, "n_bytes")
    3.0
    >>> check_real(float("nan"), "n_bytes")
    Traceback (most recent call last):
    ...
    ValueError: n_bytes must be a finite number, got nan
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} "
                        f"({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def check_positive(value, name: str) -> float:
    """Return ``value`` as a float if it is finite and > 0, else raise."""
    value = check_real(value, name)
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return value


def check_nonnegative(value, name: str) -> float:
    """Return ``value`` as a float if it is finite and >= 0, else raise."""
    value = check_real(value, name)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return value


def check_fraction(value, name: str) -> float:
    """Return ``value`` as a float if it lies in [0, 1], else raise."""
    value = check_real(value, name)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return value


def check_int(value, name: str, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """Return ``value`` as an int within [minimum, maximum], else raise.

    Floats that are whole numbers (``8.0``) are accepted; ``True`` is not.

    >>> check_int(8, "n_ranks", minimum=1)
    8
    >>> check_int(0, "n_ranks", minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: n_ranks must be an integer >= 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an integer, got {value!r} "
                        f"({type(value).__name__})")
    if isinstance(value, numbers.Integral):
        ivalue = int(value)
    else:
        fvalue = float(value)
        if not math.isfinite(fvalue) or fvalue != int(fvalue):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        ivalue = int(fvalue)
    lo = "" if minimum is None else f" >= {minimum}"
    hi = "" if maximum is None else f" <= {maximum}"
    rng = (lo + (" and" if lo and hi else "") + hi) or ""
    if (minimum is not None and ivalue < minimum) or (
            maximum is not None and ivalue > maximum):
        raise ValueError(f"{name} must be an integer{rng}, got {value!r}")
    return ivalue


def check_choice(value, name: str, allowed) -> str:
    """Return ``value`` normalised (lower case, no spaces, ``_`` for ``-``)
    if it is one of ``allowed``; else raise listing them.

    >>> check_choice("AllReduce", "collective", ["allreduce", "allgather"])
    'allreduce'
    """
    if isinstance(value, str) and isinstance(allowed, (dict, tuple, list, set, frozenset)) \
            and value in allowed:  # already one of them: nothing to normalise
        return value
    allowed = list(allowed)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {allowed}; "
                        f"got {value!r}")
    def _norm(text):
        return str(text).strip().lower().replace(" ", "").replace("_", "-")

    key = _norm(value)
    norm = {_norm(a): a for a in allowed}
    if key not in norm:
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return norm[key]


# --- parsing ---------------------------------------------------------------
_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"


def _split(text, name):
    if isinstance(text, bool):
        raise TypeError(f"{name} must be a number or a string, got {text!r}")
    if isinstance(text, numbers.Real):
        return check_real(text, name), None
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a number or a string, got "
                        f"{type(text).__name__}")
    m = re.fullmatch(r"\s*" + _NUM + r"\s*([A-Za-zµμ/]*)\s*", text)
    if not m:
        raise ValueError(f"{name}: cannot read {text!r} as a number with a unit")
    return float(m.group(1)), m.group(2)


def _prefix(unit: str, name: str, text) -> float:
    if unit in _BINARY:
        return _BINARY[unit]
    if unit in _DECIMAL:
        return _DECIMAL[unit]
    raise ValueError(f"{name}: unknown prefix {unit!r} in {text!r}; use k, M, G, T "
                     f"(decimal) or Ki, Mi, Gi, Ti (binary)")


def parse_size(text, name: str = "size") -> float:
    """Read a size in bytes: ``"1 GiB"``, ``"64MB"``, ``"8"``, ``"16G"``.

    A bare number means bytes.  ``B`` means bytes and ``b`` means bits
    (``"8 Gb"`` is 1 GB).  A trailing ``B`` may be left off (``"16G"``),
    as nccl-tests writes its sizes.

    >>> parse_size("16G")
    16000000000.0
    >>> parse_size("8 Gb")
    1000000000.0
    """
    value, unit = _split(text, name)
    if unit is None or unit == "":
        result = value
    else:
        bits = unit.endswith("b") and not unit.endswith("B")
        stem = unit[:-1] if unit[-1] in "bB" else unit
        factor = _prefix(stem, name, text)
        result = value * factor / (BITS_PER_BYTE if bits else 1)
    return check_nonnegative(result, name)


def parse_bandwidth(text, name: str = "bandwidth") -> float:
    """Read a bandwidth in bytes per second.

    ``"25 GB/s"`` is bytes, ``"400 Gb/s"`` and ``"400 Gbps"`` are bits.
    A bare number is taken as bytes per second.

    >>> parse_bandwidth("25 GB/s")
    25000000000.0
    >>> parse_bandwidth("100Gbps")
    12500000000.0
    """
    value, unit = _split(text, name)
    if unit is None or unit == "":
        return check_nonnegative(value, name)
    u = unit
    if u.endswith("ps"):
        u = u[:-2] + "/s"
    if not u.endswith("/s"):
        raise ValueError(f"{name}: {text!r} is not a rate; write e.g. '25 GB/s' "
                         f"(bytes) or '400 Gb/s' (bits)")
    return check_nonnegative(parse_size(f"{value}{u[:-2]}", name), name)


def parse_time(text, name: str = "time") -> float:
    """Read a duration in seconds: ``"2 us"``, ``"1.5ms"``, ``"3"``.

    >>> parse_time("2 us")
    2e-06
    """
    value, unit = _split(text, name)
    if unit is None or unit == "":
        return check_nonnegative(value, name)
    if unit not in _TIME:
        raise ValueError(f"{name}: unknown time unit {unit!r}; use one of "
                         f"{sorted(_TIME)}")
    return check_nonnegative(value * _TIME[unit], name)


def gbyte_per_s(value: float) -> float:
    """``value`` GB/s (decimal gigabytes) in bytes per second."""
    return check_nonnegative(value, "value") * GB


def gbit_per_s(value: float) -> float:
    """``value`` Gb/s (decimal gigabits) in bytes per second."""
    return check_nonnegative(value, "value") * GB / BITS_PER_BYTE


# --- formatting ------------------------------------------------------------
def _fmt(value: float, digits: int) -> str:
    text = f"{value:.{digits}g}"
    if "e" in text:
        text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return text


def format_bytes(n_bytes: float, binary: bool = False, digits: int = 3) -> str:
    """Format a byte count: ``format_bytes(1.5e9) == '1.5 GB'``.

    >>> format_bytes(24.5e9)
    '24.5 GB'
    >>> format_bytes(0)
    '0 B'
    """
    n = check_real(n_bytes, "n_bytes")
    steps = ([("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)] if binary
             else [("TB", TB), ("GB", GB), ("MB", MB), ("kB", KB)])
    for suffix, factor in steps:
        if abs(n) >= factor:
            return f"{_fmt(n / factor, digits)} {suffix}"
    return f"{_fmt(n, digits)} B"


def format_size(n_bytes: float) -> str:
    """A message size as a learner chose it: binary units (KiB, MiB, GiB) for a
    whole number of KiB, decimal (kB, MB, GB) otherwise -- so a slider set to
    8 MiB is not read back as "8.39 MB".

    >>> format_size(8 * MiB), format_size(1e6), format_size(100)
    ('8 MiB', '1 MB', '100 B')
    """
    n = check_real(n_bytes, "n_bytes")
    return format_bytes(n, binary=abs(n) >= KiB and float(n).is_integer() and n % KiB == 0)


def format_bandwidth(bw_bytes_per_s: float, bits: bool = False,
                     digits: int = 3) -> str:
    """Format a bandwidth: bytes (``GB/s``) by default, bits (``Gb/s``) on request.

    >>> format_bandwidth(50e9, bits=True)
    '400 Gb/s'
    """
    bw = check_real(bw_bytes_per_s, "bw_bytes_per_s")
    if bits:
        bw *= BITS_PER_BYTE
        for suffix, factor in [("Tb/s", TB), ("Gb/s", GB), ("Mb/s", MB),
                               ("kb/s", KB)]:
            if abs(bw) >= factor:
                return f"{_fmt(bw / factor, digits)} {suffix}"
        return f"{_fmt(bw, digits)} b/s"
    return format_bytes(bw, digits=digits) + "/s"


def format_time(seconds: float, digits: int = 3) -> str:
    """Format a duration with a readable unit.

    >>> format_time(5.4e-2)
    '54 ms'
    >>> format_time(2e-6)
    '2 µs'
    """
    t = check_real(seconds, "seconds")
    a = abs(t)
    if a == 0:
        return "0 s"
    for suffix, factor in [("s", 1.0), ("ms", MS), ("µs", US), ("ns", NS)]:
        if a >= factor:
            return f"{_fmt(t / factor, digits)} {suffix}"
    return f"{_fmt(t / NS, digits)} ns"


def format_count(count: float, unit: str = "", digits: int = 3) -> str:
    """Format a count the way people say it: ``'7 B params'``, ``'10,000'``.

    Thousands get separators up to 99,999; from 100,000 on the count is
    scaled to thousands (k), millions (M), billions (B, as in "a 7 B model")
    or trillions (T).  ``unit`` follows after a space.

    >>> format_count(7e9, "params")
    '7 B params'
    >>> format_count(10000)
    '10,000'
    >>> format_count(1.75e8, "params")
    '175 M params'
    >>> format_count(2.5)
    '2.5'
    """
    n = check_real(count, "count")
    tail = f" {unit}" if unit else ""
    for suffix, factor in [("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)]:
        if abs(n) >= max(factor, 1e5):
            return f"{_fmt(n / factor, digits)} {suffix}{tail}"
    if n == int(n):
        return f"{int(n):,}{tail}"
    return f"{_fmt(n, digits)}{tail}"


def format_distance(metres: float, digits: int = 3) -> str:
    """Format a length: centimetres below 1 m, metres, kilometres from 1 km.

    >>> format_distance(100e3)
    '100 km'
    >>> format_distance(2.5)
    '2.5 m'
    >>> format_distance(0.3)
    '30 cm'
    """
    m = check_real(metres, "metres")
    if m == 0:
        return "0 m"
    if abs(m) >= 1e3:
        return f"{_fmt(m / 1e3, digits)} km"
    if abs(m) >= 1:
        return f"{_fmt(m, digits)} m"
    return f"{_fmt(m * 100, digits)} cm"


def binary_size_ticks(lo: float, hi: float, max_ticks: int = 7) -> list[float]:
    """Round tick positions for a byte axis from ``lo`` to ``hi``: powers of two
    that read as whole binary units (1 KiB, 32 KiB, 1 MiB, ...), at most
    ``max_ticks`` of them (every power, or every 2nd, 5th, 10th, 20th).

    >>> [format_bytes(t, binary=True) for t in binary_size_ticks(1000, 2e9)]
    ['1 KiB', '32 KiB', '1 MiB', '32 MiB', '1 GiB']
    >>> [format_bytes(t, binary=True) for t in binary_size_ticks(4096, 65536)]
    ['4 KiB', '8 KiB', '16 KiB', '32 KiB', '64 KiB']
    """
    lo, hi = check_positive(lo, "lo"), check_positive(hi, "hi")
    if hi < lo:
        lo, hi = hi, lo
    first, last = math.ceil(math.log2(lo) - 1e-9), math.floor(math.log2(hi) + 1e-9)
    for step in (1, 2, 5, 10, 20, 40):
        start = -(-first // step) * step
        exps = list(range(start, last + 1, step))
        if len(exps) <= max(1, int(max_ticks)):
            return [2.0 ** e for e in exps]
    return [2.0 ** e for e in range(-(-first // 40) * 40, last + 1, 40)]


def format_size_tick(n_bytes: float) -> str:
    """A byte-axis tick label: ``'32 KiB'``, ``'1 GiB'``, ``'512 B'``.

    >>> format_size_tick(2**15), format_size_tick(512)
    ('32 KiB', '512 B')
    """
    return format_bytes(n_bytes, binary=True, digits=3) if n_bytes > 0 else ""
