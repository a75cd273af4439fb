"""Read the text that nccl-tests prints: one dict per result row, in SI units.

``nccl-tests`` (``all_reduce_perf``, ``all_gather_perf``, ``reduce_scatter_perf``,
``broadcast_perf``, ``reduce_perf``, ``alltoall_perf``, ...) prints a header, one
line per message size and a footer.  The layout has changed over the years
(read in ``NVIDIA/nccl-tests:src/common.cu``, ``src/util.cu`` and the
``print_header`` of each test across the repository's history):

* pasted: the ``#`` that opens each header line is often lost when a log is
  copied into a document or an issue (``nThread 1 nGpus 1 ...``, ``Rank  0
  Pid ...``, ``size count type redop root time algbw busbw wrong ...``);
  those lines are read the same;
* 2017-2018: ``bytes N type op time algbw busbw res``, time in **ms**, no
  ``(B) (elements)`` units line, device lines ``Rank 0 on host device 0``;
* 2019-2022: ``size count type redop time algbw busbw error``, time in us;
  ``error`` is the largest deviation found (``2e-07``), not a count; some
  tests leave a column out (AllGather has no ``redop``, Broadcast prints
  ``root`` instead) and some print it empty (AlltoAll's ``redop``);
* from 2022 (NCCL 2.13): a ``root`` column and ``#wrong`` (a count of wrong
  elements) in every test; device lines ``Rank 0 Group 0 Pid ...``;
* from 2025: ``# nccl-tests version 2.17.x nccl-headers=... nccl-library=...``
  and ``# Collective test starting: all_reduce_perf`` open each run,
  ``# Collective test concluded`` closes it; ``-I 1`` adds per-iteration
  columns and ``-Z`` a timestamp, both ignored here.

With ``-c 0`` (no validation) the ``#wrong``/``error`` column says ``N/A``.
Under MPI each line may carry a launcher tag (Open MPI's
``[1,0]<stdout>:``, MPICH's ``[0]``, Slurm's ``srun -l`` ``0:``), and with
``NCCL_DEBUG=INFO`` NCCL's own lines (``host:pid:tid [0] NCCL INFO ...``)
land anywhere, even in the middle of a result row; all of that is removed
before a row is read.  Several runs may follow one another in one text.

Units: nccl-tests prints time in microseconds and bandwidth in GB/s
(decimal, 1e9 bytes/s); the rows hold seconds and bytes per second.

Taught in chapter 7 (busbw vs algbw) and used by ``cl.calibrate`` and
``python -m course_lib predict --from-log``.

Examples
--------
>>> log = '''# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
... #  Rank  0 Group  0 Pid   4242 on      node1 device  0 [0x1b] NVIDIA H100 80GB HBM3
... #  Rank  1 Group  0 Pid   4242 on      node1 device  1 [0x43] NVIDIA H100 80GB HBM3
... #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
... #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
...      1048576        262144     float     sum      -1    20.50   51.15   51.15      0    20.10   52.17   52.17      0
... # Out of bounds values : 0 OK
... # Avg bus bandwidth    : 51.66
... '''
>>> row = read_nccl_tests(log, collective="allreduce")[0]
>>> row["n_bytes"], row["time_s"], row["busbw_bytes_per_s"], row["n_ranks"]
(1048576, 2.05e-05, 51150000000.0, 2)
>>> row["hosts"], row["n_gpus_per_process"], row["wrong"]
(['node1'], 2, 0)
"""

from __future__ import annotations

import math
import re

from .units import GB, MS, US

__all__ = ["read_nccl_tests", "nccl_tests_runs", "rows_by_collective",
           "collective_name", "busbw_factor", "NCCL_TESTS_PROGRAMS"]

#: nccl-tests programs (without ``_perf``) and the collective names the
#: course's models use.
NCCL_TESTS_PROGRAMS = {
    "all_reduce": "allreduce", "all_gather": "allgather",
    "reduce_scatter": "reducescatter", "broadcast": "broadcast",
    "reduce": "reduce", "alltoall": "alltoall", "alltoallv": "alltoallv",
    "sendrecv": "sendrecv", "gather": "gather", "scatter": "scatter",
    "hypercube": "hypercube",
}
_CANONICAL = set(NCCL_TESTS_PROGRAMS.values())
# decimal exponents of nccl-tests' printed units (GB/s = 1e9 bytes/s, us, ms)
_GB_EXPONENT = f"e{round(math.log10(GB))}"
_US_EXPONENT = f"e{round(math.log10(US))}"
_MS_EXPONENT = f"e{round(math.log10(MS))}"

# launcher tags: Open MPI --tag-output "[1,0]<stdout>:", MPICH "[0]", srun -l "0: "
_TAG = re.compile(r"\[\d+(?:,\d+)?\](?:<std(?:out|err)>:)?")
_SRUN_LABEL = re.compile(r"^\s*\d+:\s")
# NCCL's own debug lines: "host:pid:tid [dev] NCCL INFO ..." (also WARN, TRACE)
_NCCL_DEBUG = re.compile(r"(?:\S+:\d+:\d+\s+)?(?:\[\d+\]\s+)?NCCL (?:INFO|WARN|TRACE|ABORT)\b"
                         r"|NCCL version \d")
_PROGRAM = re.compile(r"\b(all_reduce|all_gather|reduce_scatter|broadcast|reduce|alltoallv?"
                      r"|sendrecv|gather|scatter|hypercube)_perf(?:_mpi)?\b")
_TESTS_VERSION = re.compile(r"nccl-tests version (\S+).*?nccl-library=(\d+)")
_STARTING = re.compile(r"Collective test starting:\s*(\S+)")
_CONCLUDED = re.compile(r"Collective test concluded")
_PARAMS = re.compile(r"nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)")
_VALIDATION = re.compile(r"validation:\s*(\d+)")
_RANK = re.compile(r"^#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?(?:Pid\s+\d+\s+)?on\s+(\S+)\s+"
                   r"device\s+\d+(?:\s+\[[^\]]*\])?\s*(.*?)\s*$")
_NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_NRANKS = re.compile(r"\bnranks (\d+)\b", re.IGNORECASE)
_OOB = re.compile(r"Out of bounds values\s*:\s*(\d+)")
_AVG = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)")
_ROW_START = re.compile(r"^\s*\d+\s+\d+(?:\s|$)")
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^(?:N/A|-?nan|-?inf)$",
                     re.IGNORECASE)

# header names of the columns, old spellings mapped to the current ones
_FRONT = {"size": "size", "bytes": "size", "count": "count", "n": "count", "type": "type",
          "redop": "redop", "op": "redop", "root": "root"}
_BODY = {"time": "time", "cputime": "time", "algbw": "algbw", "busbw": "busbw",
         "#wrong": "wrong", "wrong": "wrong", "error": "error", "res": "error",
         "i_min": "skip", "i_max": "skip", "i_p99": "skip", "i_cv%": "skip"}

# bus-bandwidth factor of each collective on n ranks (nccl-tests
# ``doc/PERFORMANCE.md``) for busbw_factor; the rows keep nccl-tests' own numbers.
_FACTORS = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n, "reducescatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0, "sendrecv": lambda n: 1.0,
}


def collective_name(name: str) -> str:
    """The course's name of a collective from a program or collective name.

    >>> collective_name("reduce_scatter_perf_mpi")
    'reducescatter'
    >>> collective_name("AllReduce")
    'allreduce'
    >>> collective_name("bogus")
    Traceback (most recent call last):
    ...
    ValueError: collective must be one of allgather, allreduce, alltoall, alltoallv, broadcast, gather, hypercube, reduce, reducescatter, scatter, sendrecv (or an nccl-tests program such as all_reduce_perf), got 'bogus'
    """
    if not isinstance(name, str):
        raise TypeError(f"collective must be a str such as 'allreduce', got {name!r} "
                        f"({type(name).__name__})")
    key = name.strip().lower().replace("-", "_")
    key = re.sub(r"(_perf)?(_mpi)?$", "", key)
    if key in NCCL_TESTS_PROGRAMS:
        return NCCL_TESTS_PROGRAMS[key]
    if key.replace("_", "") in _CANONICAL:
        return key.replace("_", "")
    raise ValueError(f"collective must be one of {', '.join(sorted(_CANONICAL))} (or an "
                     f"nccl-tests program such as all_reduce_perf), got {name!r}")


def _version_from_code(code: int) -> str:
    # NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z before 2.9, X*10000+Y*100+Z since
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def _clean(line: str) -> str:
    line = _SRUN_LABEL.sub("", line, count=1) if not line.lstrip().startswith("#") else line
    return _TAG.sub("", line).rstrip()


def _number(tok, exponent=""):
    """A printed number as float, times ``10**exponent``; ``N/A``, ``nan`` and
    ``inf`` as None.  The exponent is appended to the text ("52.17" + "e9")
    so that the decimal digits convert exactly, without a float multiply."""
    try:
        v = float(tok + exponent) if exponent and "e" not in tok.lower() else float(tok)
        if exponent and "e" in tok.lower():
            v *= float("1" + exponent)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


class _Run:
    def __init__(self, first_line):
        self.first_line = first_line
        self.program = None          # from "Collective test starting" or a command line
        self.program_line = None
        self.tests_version = None
        self.nccl_version = None
        self.n_threads = self.n_gpus = None
        self.validation = None
        self.ranks = []              # (rank, host)
        self.devices = []            # the device name of each "Rank" line
        self.nranks_info = None
        self.front = self.body = None
        self.has_timestamp = False
        self.piece_ends = []         # columns where the size part and out-of-place part end
        self.time_exponent = _US_EXPONENT
        self.header_line = None
        self.rows = []
        self.out_of_bounds = None
        self.avg_busbw = None
        self.concluded = False
        self.closed = False          # the footer came: no more rows in this table


def _parse_header(tokens, lineno, raw):
    names = [t.lower() for t in tokens if t != "#"]
    front, body, ts = [], [], False
    for name in names:
        if not body and name in _FRONT:
            front.append(_FRONT[name])
        elif name in _BODY:
            body.append(_BODY[name])
        elif name == "timestamp":
            ts = True
        else:
            raise ValueError(f"line {lineno}: unknown column {name!r} in the nccl-tests "
                             f"header: {raw.strip()!r}")
    if front[:2] != ["size", "count"] or "time" not in body or "busbw" not in body:
        raise ValueError(f"line {lineno}: not an nccl-tests column header (need size, count, "
                         f"time, algbw, busbw): {raw.strip()!r}")
    return front, body, ts


def _piece_ends(header_line, n_front, n_body):
    """Columns at which a row's size part and its out-of-place part end: the
    header right-aligns each label to its column's width, so the end of the
    last size label and of the first ``#wrong``/``error`` label are there."""
    ends = [m.end() for m in re.finditer(r"(?<!\S)(?!#\s)\S+", header_line)
            if m.group() != "#"]
    if len(ends) < n_front + n_body // 2:
        return []
    return [ends[n_front - 1], ends[n_front + n_body // 2 - 1]]


def _split_body(tokens, run, lineno, raw):
    """Front fields and body fields of one row's tokens (header-driven)."""
    nb = len(run.body)
    nf = len(run.front)
    candidates = [nf]
    if "redop" in run.front:
        candidates.append(nf - 1)        # AlltoAll printed an empty redop
    for k in candidates:
        if len(tokens) < k + nb or (len(tokens) != k + nb and not run.has_timestamp):
            continue
        body = tokens[k:k + nb]
        if all(_NUMBER.match(t) for t in body):
            return tokens[:k], body
    raise ValueError(f"line {lineno}: garbled nccl-tests row (expected {nf} leading and {nb} "
                     f"numeric columns after the header at line {run.header_line}): "
                     f"{raw.strip()!r}")


def _make_row(tokens, run, lineno, raw):
    front_toks, body = _split_body(tokens, run, lineno, raw)
    try:
        n_bytes, count = int(front_toks[0]), int(front_toks[1])
    except (ValueError, IndexError):
        raise ValueError(f"line {lineno}: garbled nccl-tests row (size and count must be "
                         f"integers): {raw.strip()!r}") from None
    dtype = redop = root = None
    rest = front_toks[2:]
    if rest and not _NUMBER.match(rest[0]):
        dtype, rest = rest[0], rest[1:]
    else:
        raise ValueError(f"line {lineno}: garbled nccl-tests row (no data type after the "
                         f"count): {raw.strip()!r}")
    for tok in rest:
        if re.fullmatch(r"-?\d+", tok) and "root" in run.front and root is None:
            root = int(tok)
        elif not _NUMBER.match(tok) and redop is None:
            redop = tok
        else:
            raise ValueError(f"line {lineno}: garbled nccl-tests row (unexpected {tok!r}): "
                             f"{raw.strip()!r}")
    half = len(run.body) // 2
    sides = []
    for part in (body[:half], body[half:]):
        vals = dict(zip(run.body, part))
        t = _number(vals["time"], run.time_exponent)
        alg = _number(vals.get("algbw", "N/A"), _GB_EXPONENT)
        bus = _number(vals.get("busbw", "N/A"), _GB_EXPONENT)
        wrong = error = None
        if "wrong" in vals and _number(vals["wrong"]) is not None:
            wrong = int(_number(vals["wrong"]))
        if "error" in vals:
            error = _number(vals["error"])
        sides.append({"time_s": t, "algbw": alg, "busbw": bus,
                      "wrong": wrong, "error": error})
    out, inp = sides
    return {
        "n_bytes": n_bytes, "count": count, "dtype": dtype, "redop": redop, "root": root,
        "time_s": out["time_s"], "algbw_bytes_per_s": out["algbw"],
        "busbw_bytes_per_s": out["busbw"], "wrong": out["wrong"], "max_error": out["error"],
        "in_place_time_s": inp["time_s"], "in_place_algbw_bytes_per_s": inp["algbw"],
        "in_place_busbw_bytes_per_s": inp["busbw"], "in_place_wrong": inp["wrong"],
        "source_line": lineno,
    }


def nccl_tests_runs(text: str) -> list[dict]:
    """Every run in an nccl-tests log, with its header facts and its rows.

    Parameters
    ----------
    text : str
        The captured stdout (and stderr) of one or more nccl-tests runs.

    Returns
    -------
    list of dict
        One dict per run that printed a column header: ``program`` (e.g.
        ``"all_reduce_perf"`` or None when the text does not say),
        ``program_line``, ``nccl_version``, ``nccl_tests_version``,
        ``n_threads``, ``n_gpus_per_process``, ``validation``, ``ranks``
        (list of (rank, host)), ``n_ranks``, ``hosts``, ``devices`` (the
        device names the ``Rank`` lines print, e.g. ``"NVIDIA H100 80GB
        HBM3"``, each once; empty when the log prints none), ``header_line``,
        ``rows`` (as :func:`read_nccl_tests` without the run facts),
        ``out_of_bounds``, ``avg_busbw_bytes_per_s`` (the footer, None if
        absent) and ``concluded``.

    Raises
    ------
    TypeError
        ``text`` is not a str.
    ValueError
        Empty text, no column header, a header without rows, a garbled row or
        a row cut short; the message names the line number and its content.

    >>> runs = nccl_tests_runs('''#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
    ...            8             2     float     sum      -1    20.00    0.00    0.00    N/A    21.00    0.00    0.00    N/A
    ... # Avg bus bandwidth    : 0
    ... ''')
    >>> runs[0]["avg_busbw_bytes_per_s"], runs[0]["rows"][0]["wrong"]
    (0.0, None)
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be the log as a str, got {type(text).__name__}"
                        + (" (decode bytes first: data.decode())"
                           if isinstance(text, (bytes, bytearray)) else ""))
    if not text.strip():
        raise ValueError("text is empty: expected the output of an nccl-tests program")
    runs = []
    run = _Run(1)
    pending = None            # (lineno, raw, tokens) of a row cut by a debug line
    last_program = None       # (name, line) seen in a command line before the run

    def start_new_run(lineno):
        nonlocal run
        if run.header_line is not None or run.n_gpus is not None or run.program:
            runs.append(run)
            run = _Run(lineno)

    lines = text.splitlines()
    for lineno, raw in enumerate(lines, start=1):
        line = _clean(raw)
        stripped = line.strip()
        if not stripped:
            continue
        # NCCL's debug output may be glued to the end of a row fragment
        m = _NCCL_DEBUG.search(line)
        if m:
            v = _NCCL_VERSION.search(line)
            if v and run.nccl_version is None:
                run.nccl_version = v.group(1)
            n = _NRANKS.search(line)
            if n:
                run.nranks_info = max(run.nranks_info or 0, int(n.group(1)))
            if run.body is None or run.closed:
                continue
            # nccl-tests prints a row in pieces (sizes, out-of-place, in-place);
            # NCCL may print between them, glued to the piece before.  Cut at
            # the piece's end column (from the header) when the message starts
            # there: "-1" + "host:1:2 NCCL INFO" must not lose the root.
            if pending is None:
                cuts = [c for c in run.piece_ends[:1]]
            else:
                cuts = [c - run.piece_ends[0] for c in run.piece_ends[1:]]
            head = line[:m.start()]
            for c in cuts:
                if 0 < c < len(line) and _NCCL_DEBUG.match(line, c):
                    head = line[:c]
                    break
            if pending is None and _ROW_START.match(head):
                pending = (lineno, raw, head.split())
            elif pending is not None and head.strip() and all(
                    _NUMBER.match(t) for t in head.split()):
                pending = (pending[0], pending[1] + " ... " + head.strip(),
                           pending[2] + head.split())
            continue
        if pending is not None:
            toks = stripped.split()
            if all(_NUMBER.match(t) for t in toks):
                plineno, praw, ptoks = pending
                pending = None
                run.rows.append(_make_row(ptoks + toks, run, plineno,
                                          praw.strip() + " ... " + stripped))
                continue
            raise ValueError(f"line {pending[0]}: nccl-tests row cut short (the rest never "
                             f"came; truncated log?): {pending[1].strip()!r}")
        if _ROW_START.match(line) and not stripped.startswith("#"):
            if run.body is None or run.closed:
                continue     # numbers outside a result table: not nccl-tests' own
            toks = stripped.split()
            if len(toks) < len(run.front) - ("redop" in run.front) + len(run.body):
                if lineno == len(lines):
                    raise ValueError(f"line {lineno}: nccl-tests row cut short (truncated "
                                     f"log?): {raw.strip()!r}")
            run.rows.append(_make_row(toks, run, lineno, raw))
            continue
        body = stripped.lstrip("#").strip()
        tv = _TESTS_VERSION.search(body)
        if tv:
            start_new_run(lineno)
            run.tests_version = tv.group(1)
            run.nccl_version = _version_from_code(int(tv.group(2)))
            continue
        st = _STARTING.search(body)
        if st:
            if run.program or run.header_line is not None or run.n_gpus is not None:
                start_new_run(lineno)
            run.program, run.program_line = st.group(1), lineno
            continue
        if _CONCLUDED.search(body):
            run.concluded = True
            continue
        pm = _PARAMS.search(body)
        if pm:
            if run.n_gpus is not None or run.header_line is not None:
                start_new_run(lineno)
            run.n_threads, run.n_gpus = int(pm.group(1)), int(pm.group(2))
            vm = _VALIDATION.search(body)
            run.validation = int(vm.group(1)) if vm else None
            if run.program is None and last_program is not None:
                run.program, run.program_line = last_program
            last_program = None
            continue
        rk = _RANK.match(body)
        if rk:
            run.ranks.append((int(rk.group(1)), rk.group(2)))
            if rk.group(3):
                run.devices.append(rk.group(3))
            continue
        toks = body.split()
        low = [t.lower() for t in toks]
        if low and low[0] in ("size", "bytes") and "algbw" in low and "busbw" in low:
            if run.header_line is not None and not run.rows:
                pass                     # the header printed again (one per process)
            elif run.header_line is not None:
                start_new_run(lineno)
            run.front, run.body, run.has_timestamp = _parse_header(toks, lineno, raw)
            run.piece_ends = _piece_ends(line, len(run.front), len(run.body))
            if len(run.body) % 2:
                raise ValueError(f"line {lineno}: nccl-tests header without matching "
                                 f"out-of-place and in-place columns: {raw.strip()!r}")
            run.header_line = lineno
            if "bytes" in low:           # 2017-2018 layout printed milliseconds
                run.time_exponent = _MS_EXPONENT
            if run.program is None and last_program is not None:
                run.program, run.program_line = last_program
                last_program = None
            continue
        if "(B)" in body and "(elements)" in body:
            if "(ms)" in body:
                run.time_exponent = _MS_EXPONENT
            elif "(us)" in body:
                run.time_exponent = _US_EXPONENT
            continue
        ob = _OOB.search(body)
        if ob:
            run.out_of_bounds = int(ob.group(1))
            run.closed = run.header_line is not None
            continue
        av = _AVG.search(body)
        if av:
            run.avg_busbw = _number(av.group(1), _GB_EXPONENT)
            run.closed = run.header_line is not None
            continue
        pg = _PROGRAM.search(line)
        if pg:
            last_program = (pg.group(0), lineno)
    if pending is not None:
        raise ValueError(f"line {pending[0]}: nccl-tests row cut short at the end of the "
                         f"text (truncated log?): {pending[1].strip()!r}")
    runs.append(run)
    out = []
    for r in runs:
        if r.header_line is None:
            continue
        if not r.rows:
            raise ValueError(f"line {r.header_line}: the nccl-tests column header has no "
                             f"result rows after it (the run failed or the log was cut "
                             f"short)")
        hosts = list(dict.fromkeys(h for _, h in r.ranks))
        n_ranks = len({rank for rank, _ in r.ranks}) if r.ranks else r.nranks_info
        if r.ranks and len(r.ranks) > len({rank for rank, _ in r.ranks}):
            # every process printed "Rank 0": nccl-tests built without MPI, launched
            # by mpirun; each process ran its own nThread x nGpus communicator
            n_ranks = (r.n_threads * r.n_gpus) if r.n_gpus is not None else None
        out.append({
            "program": r.program, "program_line": r.program_line,
            "nccl_version": r.nccl_version, "nccl_tests_version": r.tests_version,
            "n_threads": r.n_threads, "n_gpus_per_process": r.n_gpus,
            "validation": r.validation, "ranks": list(r.ranks), "n_ranks": n_ranks,
            "hosts": hosts, "devices": list(dict.fromkeys(r.devices)),
            "header_line": r.header_line, "rows": r.rows,
            "out_of_bounds": r.out_of_bounds, "avg_busbw_bytes_per_s": r.avg_busbw,
            "concluded": r.concluded,
        })
    if not out:
        raise ValueError("no nccl-tests result table in the text (no line with the column "
                         "header 'size count type ... time algbw busbw')")
    return out


def read_nccl_tests(text: str, collective: str | None = None,
                    keep_empty: bool = False) -> list[dict]:
    """Read nccl-tests output into one dict per result row.

    Parameters
    ----------
    text : str
        The captured output of one or more nccl-tests runs, any release from
        2017 on, one process with ``-g N`` or many under MPI/Slurm, with or
        without ``NCCL_DEBUG=INFO`` lines and launcher tags.
    collective : str, optional
        The collective, for logs that do not name their program (before 2025
        nccl-tests printed no ``Collective test starting`` line; a command
        line such as ``./build/all_gather_perf -b 8`` in the text also
        counts).  Given for a log that names a different one, it is an error.
    keep_empty : bool
        nccl-tests prints rows of 0 bytes when the size is smaller than one
        element per rank (AllGather, ReduceScatter, AlltoAll): their time is
        the launch overhead and their bandwidths are 0.  They are left out
        unless ``keep_empty=True``.

    Returns
    -------
    list of dict
        One per row, in the order printed.  Keys: ``collective``
        (``"allreduce"``, ``"allgather"``, ``"reducescatter"``, ...),
        ``n_bytes`` (the size column: nccl-tests' bytes per rank for
        AllReduce, the whole gathered buffer for AllGather), ``time_s``,
        ``algbw_bytes_per_s``, ``busbw_bytes_per_s`` (out-of-place),
        ``in_place_time_s``, ``in_place_algbw_bytes_per_s``,
        ``in_place_busbw_bytes_per_s``, ``count``, ``dtype``, ``redop``
        (None where the test has no reduction column or prints it empty),
        ``root``, ``wrong`` and ``in_place_wrong`` (number of wrong elements,
        None when nccl-tests printed ``N/A`` -- validation off with ``-c 0``
        -- or when the log is older than 2022 and its ``error`` column holds
        the largest deviation instead, kept in ``max_error``), ``n_ranks``
        (counted from the header's device lines, else from NCCL's ``nranks``
        INFO lines, else None; when every process printed ``Rank 0`` --
        nccl-tests built without MPI under mpirun, each process its own
        communicator -- it is nThread x nGpus),
        ``n_gpus_per_process`` (``-g``), ``hosts`` (host names in rank order,
        may be empty), ``devices`` (the GPU names the ``Rank`` lines print,
        each once, e.g. ``["AMD Instinct MI300X"]``; may be empty),
        ``nccl_version`` (None when the log does not show it),
        ``program`` and ``source_line`` (1-based line of the row in ``text``).
        A value printed as ``N/A``, ``nan`` or ``inf`` is None.  The bandwidths
        are nccl-tests' own: before June 2020 (nccl-tests commit ec1b5e2) its
        AllGather and ReduceScatter printed algbw = busbw = (n-1)/n x size /
        time; ``time_s`` and ``n_bytes`` mean the same in every release.

    Raises
    ------
    TypeError
        ``text`` is not a str, ``collective`` not a str, ``keep_empty`` not a bool.
    ValueError
        Empty text, no result table, a header without rows, a garbled or
        truncated row (the message names the line and shows it), a log that
        does not name its collective when ``collective`` is not given, or an
        unknown ``collective``.

    Examples
    --------
    >>> log = '''# nccl-tests version 2.17.9 nccl-headers=22403 nccl-library=22403
    ... # Collective test starting: all_gather_perf
    ... # nThread 1 nGpus 8 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0
    ... #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
    ... #        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
    ...            0             0     float    none      -1     0.25    0.00    0.00       0     0.23    0.00    0.00       0
    ...      1048576         32768     float    none      -1    20.00   52.43   45.88       0    19.00   55.19   48.29       0
    ... '''
    >>> rows = read_nccl_tests(log)
    >>> len(rows), rows[0]["collective"], rows[0]["nccl_version"], rows[0]["source_line"]
    (1, 'allgather', '2.24.3', 7)
    >>> len(read_nccl_tests(log, keep_empty=True))
    2
    """
    if collective is not None:
        collective = collective_name(collective)
    if not isinstance(keep_empty, bool):
        raise TypeError(f"keep_empty must be True or False, got {keep_empty!r}")
    rows = []
    for run in nccl_tests_runs(text):
        coll = collective_name(run["program"]) if run["program"] else None
        if collective is not None and coll is not None and coll != collective:
            raise ValueError(f"collective={collective!r} but line {run['program_line']} of the "
                             f"log names {run['program']!r}")
        coll = coll or collective
        if coll is None:
            raise ValueError(f"line {run['header_line']}: the log does not say which collective "
                             f"ran (no 'Collective test starting' line or *_perf command); "
                             f"pass collective='allreduce' (or the one you ran)")
        for row in run["rows"]:
            if row["n_bytes"] == 0 and not keep_empty:
                continue
            rows.append({"collective": coll, **row, "n_ranks": run["n_ranks"],
                         "n_gpus_per_process": run["n_gpus_per_process"],
                         "hosts": list(run["hosts"]), "devices": list(run["devices"]),
                         "nccl_version": run["nccl_version"],
                         "program": run["program"]})
    return rows


def rows_by_collective(rows) -> dict:
    """Group rows by ``(collective, n_ranks)``, each list sorted by size.

    What the predictor speaks: one curve per collective and rank count, e.g.
    ``cl.predict_collective(coll, row["n_bytes"], cluster)`` for every row of
    a group.  Rows of several runs at the same size are kept in print order.

    >>> rows = [{"collective": "allreduce", "n_ranks": 8, "n_bytes": 64},
    ...         {"collective": "allreduce", "n_ranks": 8, "n_bytes": 8}]
    >>> [r["n_bytes"] for r in rows_by_collective(rows)[("allreduce", 8)]]
    [8, 64]
    """
    if isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
        raise TypeError(f"rows must be a list of dicts from read_nccl_tests, got "
                        f"{type(rows).__name__}")
    groups: dict = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or "collective" not in row or "n_bytes" not in row:
            raise ValueError(f"rows[{i}] must be a dict from read_nccl_tests with 'collective' "
                             f"and 'n_bytes', got {row!r:.80}")
        n_ranks, n_bytes = row.get("n_ranks"), row["n_bytes"]
        if (not isinstance(row["collective"], str)
                or isinstance(n_bytes, bool) or not isinstance(n_bytes, (int, float))
                or not (n_ranks is None or (isinstance(n_ranks, int)
                                            and not isinstance(n_ranks, bool)))):
            raise ValueError(f"rows[{i}] needs a str 'collective', a number 'n_bytes' and an "
                             f"int or None 'n_ranks', got {row!r:.80}")
        groups.setdefault((row["collective"], row.get("n_ranks")), []).append(row)
    return {k: sorted(v, key=lambda r: r["n_bytes"]) for k, v in groups.items()}


def busbw_factor(collective: str, n_ranks: int) -> float:
    """nccl-tests' bus-bandwidth factor (busbw = algbw x factor), from its
    ``doc/PERFORMANCE.md``: 2(n-1)/n for AllReduce, (n-1)/n for AllGather,
    ReduceScatter and AlltoAll, 1 for Broadcast, Reduce and SendRecv.

    >>> busbw_factor("allreduce", 8)
    1.75
    """
    coll = collective_name(collective)
    if coll not in _FACTORS:
        raise ValueError(f"collective has no busbw factor in nccl-tests' PERFORMANCE.md: "
                         f"{collective!r}; known: {', '.join(sorted(_FACTORS))}")
    if isinstance(n_ranks, bool) or not isinstance(n_ranks, int):
        raise TypeError(f"n_ranks must be an int, got {n_ranks!r} ({type(n_ranks).__name__})")
    if n_ranks < 1:
        raise ValueError(f"n_ranks must be >= 1, got {n_ranks}")
    return _FACTORS[coll](n_ranks)

