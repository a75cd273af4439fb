"""Inside the sandbox: run one notebook as a kernel would, then answer questions about it.

This file is the only part of the grader that exists inside the sandbox
(bind-mounted read-only by :mod:`autograder.sandbox`).  It is started as
``python -I -S ag_driver.py`` with a private work directory as its current
directory, and talks to the grader over stdin/stdout in length-prefixed JSON
frames (:func:`read_frame`, :func:`write_frame`):

1. the grader sends ``{"notebook", "sys_path", "cell_timeout_s",
   "notebook_timeout_s", "max_value_bytes"}``;
2. the driver starts an IPython kernel (nbclient, every cell in order, magics
   and all, errors allowed) and sends back ``{"executed": notebook, "events": [...]}``
   -- before it has been told anything about the tests;
3. then it answers, until ``{"op": "bye"}`` or end of input:
   ``{"op": "names", "names": [...]}`` -- what each name is in the notebook's
   namespace (``missing``, ``callable`` or its ``value``);
   ``{"op": "calls", "calls": [[name, (args, kwargs)], ...]}`` -- the return
   value or the exception of each call, each call under its own timer.
   Values and arguments travel in the data-only encoding of
   ``autograder/wire.py`` (mounted at :data:`WIRE`): the kernel writes the
   answer as data -- converting a ``defaultdict``, a masked array or a NumPy
   scalar on the way, naming the type of what it cannot write -- and the judge,
   outside, reads it as data.

The driver never sees a hidden test or an expected value: only the names the
tests read and the inputs they pass.  Output printed while answering questions
is discarded: it never reaches the feedback.

Time: a cell gets the cell time-out or what is left of the notebook's budget,
whichever is less; the budget running out is a ``budget`` event (later cells not
run, no replay).  If the kernel dies (``os._exit``, out of memory) or stops
answering after a time-out, a fresh kernel replays the cells *before* the one
that broke it, within the budget, and the cells from there on are not run: the
notebook is graded on what ran.  Events carry a kind and a cell index only: the
grader writes their text.
"""

import asyncio
import base64
import json
import math
import os
import struct
import sys
import time

MAX_FRAME = 256 * 2**20

#: Where the data-only encoding (autograder/wire.py) lies inside the sandbox.
WIRE = "/opt/interconnect/ag_wire.py"
#: Seconds the answers get even when the notebook used its whole budget (names, quick calls).
ANSWER_FLOOR_S = 5.0

HELPER = r'''
def __ag_serve(_req, _resp, _wire_path):
    import json as _J, signal as _S, time as _T, importlib.util as _U
    _spec = _U.spec_from_file_location("_ag_wire", _wire_path)
    _W = _U.module_from_spec(_spec)
    _spec.loader.exec_module(_W)
    with open(_req, encoding="utf-8") as _f:
        _job = _J.load(_f)
    _ns = get_ipython().user_ns
    _rows = _W.Rows(_W.Limits(max_bytes=_job["max_value_bytes"]))
    _t0 = _T.monotonic()

    def _save():
        import os as _os
        with open(_resp + ".part", "wb") as _fh:
            _fh.write(_rows.text())
        _os.replace(_resp + ".part", _resp)

    def _alarm(*_a):
        raise TimeoutError("your function ran past the time limit of %g s" % _job["timeout_s"])

    if _job["op"] == "names":
        for _n in _job["names"]:
            if _n not in _ns:
                _rows.add(["missing"])
            elif callable(_ns[_n]):
                _rows.add(["callable"])
            else:
                _rows.add(["value", _ns[_n]])
    else:
        for _n, _blob in _job["calls"]:
            _left = _job["limit_s"] - (_T.monotonic() - _t0)
            _f = _ns.get(_n)
            if _left <= 0.05:
                _rows.add(["budget", "not called: the notebook's time budget was used up"])
            elif not callable(_f):
                _rows.add(["error", "NameError", f"name {_n!r} is not defined (or not a function)"])
            else:
                try:
                    _a, _k = _W.decode(_blob)
                    _S.signal(_S.SIGALRM, _alarm)
                    _S.setitimer(_S.ITIMER_REAL, min(_job["timeout_s"], _left))
                    try:
                        _r = _f(*_a, **_k)
                    finally:
                        _S.setitimer(_S.ITIMER_REAL, 0)
                    _rows.add(["value", _r])
                except BaseException as _e:
                    try:
                        _msg = str(_e)[:500]
                    except BaseException:
                        _msg = "?"
                    _rows.add(["error", type(_e).__name__, _msg])
            _save()        # progress: a call that hangs later loses only itself
    _save()
'''


def cap(outputs, limit):
    """At most ``limit`` bytes per output and 200 outputs per cell, so that the executed
    notebook always fits the channel (the grader caps again, with its notes)."""
    kept = []
    for out in outputs[:200]:
        kind = out.get("output_type")
        if kind == "stream":
            text = out.get("text", "")
            text = "".join(text) if isinstance(text, list) else str(text)
            if len(text) > limit:
                out["text"] = (text[:limit] + f"\n[... output cut by the grader: {len(text):,} "
                               f"characters, the first {limit:,} kept]\n")
        elif kind in ("display_data", "execute_result"):
            data = out.get("data", {})
            for mime in list(data):
                value = data[mime]
                size = len(value) if isinstance(value, str) else len(json.dumps(value))
                if size > limit:
                    del data[mime]
                    data["text/plain"] = (f"[{mime} output of {size:,} bytes removed by the "
                                          f"grader: larger than {limit:,} bytes]")
        elif kind == "error":
            out["traceback"] = [str(t)[:limit // 4] for t in out.get("traceback", [])[-20:]]
            out["evalue"] = str(out.get("evalue", ""))[:limit]
        kept.append(out)
    if len(outputs) > 200:
        kept.append({"output_type": "stream", "name": "stdout",
                     "text": f"[{len(outputs) - 200:,} more outputs removed by the grader]\n"})
    return kept


def read_frame(stream):
    head = stream.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack(">Q", head)
    if n > MAX_FRAME:
        raise ValueError(f"frame of {n} bytes is larger than {MAX_FRAME}")
    data = stream.read(n)
    if len(data) < n:
        return None
    return json.loads(data.decode("utf-8"))


def write_frame(stream, obj):
    data = json.dumps(obj).encode("utf-8")
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


class Runner:
    def __init__(self, job, out):
        import nbformat
        self.nbformat = nbformat
        self.job = job
        self.out = out
        self.nb = nbformat.from_dict(job["notebook"])
        self.cell_timeout = int(job.get("cell_timeout_s", 30))
        self.budget = float(job.get("notebook_timeout_s", 300))
        self.events = []
        self.client = None
        self.ran_until = len(self.nb.cells)   # cells [0, ran_until) are the kernel's state
        self.home = os.getcwd()
        self.deadline = time.monotonic() + self.budget
        self.answer_deadline = None
        self.over_budget = False
        self.stuck = False

    def make_client(self):
        from nbclient import NotebookClient
        return NotebookClient(self.nb, timeout=self.cell_timeout, kernel_name="ag-python",
                              allow_errors=True, interrupt_on_timeout=True,
                              record_timing=False, startup_timeout=60, iopub_timeout=10,
                              raise_on_iopub_timeout=False,
                              resources={"metadata": {"path": self.home}})

    async def _cell(self, client, index, cell, limit):
        await asyncio.wait_for(client.async_execute_cell(cell, index), limit)

    async def _alive(self, client):
        try:
            return bool(await client.km.is_alive())
        except Exception:
            return False

    async def _probe(self, client, limit=5.0):
        """True if the kernel still answers a no-op."""
        from nbformat.v4 import new_code_cell
        try:
            await asyncio.wait_for(client.async_execute_cell(new_code_cell("pass"), 0), limit)
            return True
        except Exception:
            return False

    async def execute(self):
        """Every cell in order.  A cell gets ``cell_timeout_s`` or what is left of the
        notebook's budget, whichever is less; when the budget is what ran out, the cell
        is interrupted, a ``budget`` event is reported and the later cells are not run
        (the kernel keeps its state: no replay)."""
        from nbclient.exceptions import CellTimeoutError, DeadKernelError
        client = self.make_client()
        client.km = client.create_kernel_manager()
        await client.async_start_new_kernel()
        await client.async_start_new_kernel_client()
        self.deadline = time.monotonic() + self.budget
        broke = None
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type != "code":
                continue
            left = self.deadline - time.monotonic()
            if left <= 0:
                self.events.append({"kind": "budget", "cell": index})
                self._not_run(index, "the notebook's time budget was used up")
                self.ran_until = index
                break
            by_budget = left < self.cell_timeout
            limit = min(float(self.cell_timeout), left)
            client.timeout = max(1, math.ceil(limit))
            started = time.monotonic()
            try:
                await self._cell(client, index, cell, limit + 10)
            except DeadKernelError:
                spent = time.monotonic() - started
                if by_budget and spent >= limit:
                    broke = ("budget", index)
                elif spent >= self.cell_timeout:   # it was stuck, then lost
                    broke = ("unresponsive", index)
                else:
                    broke = ("dead-kernel", index)
            except (CellTimeoutError, asyncio.TimeoutError):
                broke = ("budget" if by_budget else "unresponsive", index)
            except Exception:  # nbclient's own trouble: treat as a broken kernel
                broke = ("dead-kernel", index)
            else:
                if any(o.get("output_type") == "error" and o.get("ename") in
                       ("CellTimeoutError", "KeyboardInterrupt") for o in cell.outputs) \
                        or getattr(client, "_ag_timed_out", False):
                    if by_budget:
                        self.events.append({"kind": "budget", "cell": index})
                        self._not_run(index + 1, f"the notebook's time budget ran out in cell {index}")
                        self.ran_until = index + 1
                        if not await self._probe(client):
                            self.stuck = True
                        break
                    self.events.append({"kind": "timeout", "cell": index})
                    if not await self._probe(client):
                        broke = ("unresponsive", index)
                elif not await self._alive(client):
                    broke = ("dead-kernel", index)
            if broke:
                kind, index = broke
                why = {"budget": "the notebook's time budget ran out and the kernel did not stop",
                       "unresponsive": "the kernel ignored the interrupt after a time-out",
                       "dead-kernel": "the kernel died (os._exit, a signal, or out of memory)"}[kind]
                if kind == "unresponsive":
                    self.events.append({"kind": "timeout", "cell": index})
                self.events.append({"kind": kind, "cell": index})
                cell.outputs.append({"output_type": "error", "ename": "DeadKernelError"
                                     if kind == "dead-kernel" else "UnresponsiveKernel",
                                     "evalue": why, "traceback": [why]})
                self._not_run(index + 1, f"not run: {why} in cell {index}")
                self.ran_until = index
                if kind == "budget":
                    self.stuck = True          # no time is left for a replay
                    broke = None
                break
        self.client = client
        return broke

    def _not_run(self, start, why):
        for cell in self.nb.cells[start:]:
            if cell.cell_type == "code":
                cell.outputs = [{"output_type": "error", "ename": "NotExecuted", "evalue": why,
                                 "traceback": [why]}]

    async def replay(self):
        """A fresh kernel runs the cells before the one that broke the old one, within what
        is left of the budget."""
        try:
            await self.client._async_cleanup_kernel()
        except Exception:
            pass
        import copy
        cells = [copy.deepcopy(c) for c in self.nb.cells[:self.ran_until]]
        client = self.make_client()
        client.km = client.create_kernel_manager()
        await client.async_start_new_kernel()
        await client.async_start_new_kernel_client()
        for index, cell in enumerate(cells):
            if cell.cell_type == "code":
                left = self.deadline - time.monotonic()
                if left <= 0:
                    self.events.append({"kind": "budget", "cell": index})
                    break
                client.timeout = max(1, math.ceil(min(float(self.cell_timeout), left)))
                try:
                    await self._cell(client, index, cell, min(float(self.cell_timeout), left) + 10)
                except Exception:
                    break
        self.client = client

    async def ask(self, request, limit):
        """Run one question in the kernel; the answer (data-only JSON bytes), or None.

        Each call has its own limit (``timeout_s``, a timer in the kernel); the cell
        that answers the batch is never timed as a cell.  All answers together get
        what is left of the notebook's budget (at least :data:`ANSWER_FLOOR_S`)."""
        from nbformat.v4 import new_code_cell
        req = os.path.join(self.home, ".ag-req")
        resp = os.path.join(self.home, ".ag-resp")
        try:
            os.remove(resp)
        except OSError:
            pass
        if getattr(self, "stuck", False):
            return None
        now = time.monotonic()
        if self.answer_deadline is None:
            self.answer_deadline = max(self.deadline, now + ANSWER_FLOOR_S)
        left = self.answer_deadline - now
        if request["op"] == "names":
            left = max(left, 3.0)
        limit = max(0.0, min(limit, left))
        request = dict(request, limit_s=limit)
        with open(req, "w", encoding="utf-8") as fh:
            json.dump(request, fh)
        cell = new_code_cell(HELPER + f"\n__ag_serve({req!r}, {resp!r}, {WIRE!r})\n")
        per_call = float(request.get("timeout_s", self.cell_timeout))
        self.client.timeout = None         # timed call by call, below and in the kernel
        task = asyncio.ensure_future(self.client.async_execute_cell(cell, 0, store_history=False))
        start = last_change = time.monotonic()
        last, interrupted = None, False
        while not task.done():
            await asyncio.wait([task], timeout=0.25)
            now = time.monotonic()
            try:
                size = os.path.getsize(resp)
            except OSError:
                size = -1
            if size != last:
                last, last_change = size, now
            if task.done():
                break
            if not interrupted and (now - last_change > per_call + 3 or now - start > limit + 3):
                interrupted, last_change = True, now     # a call ignores its timer: interrupt it
                try:
                    await self.client.km.interrupt_kernel()
                except Exception:
                    pass
            elif (interrupted and now - last_change > 5) or now - start > limit + 10:
                task.cancel()
                self.stuck = True                         # the kernel no longer answers
                break
        try:
            task.exception() if task.done() and not task.cancelled() else None
        except Exception:
            pass
        self.over_budget = self.over_budget or time.monotonic() - start > limit
        try:
            with open(resp, "rb") as fh:
                return fh.read()
        except OSError:
            return None


_OUT = []


def main():
    out = os.fdopen(os.dup(1), "wb")
    _OUT.append(out)
    inp = sys.stdin.buffer
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    job = read_frame(inp)
    if job is None:
        return 2
    sys.path[:] = job["sys_path"]
    # jsonschema's optional IRI format checker builds a grammar at import (about 5 s of CPU):
    # the driver never validates IRIs, so it is left out (only in this process)
    sys.modules.setdefault("rfc3987_syntax", None)
    spec_dir = os.path.join(os.environ.get("JUPYTER_DATA_DIR", os.getcwd()), "kernels", "ag-python")
    os.makedirs(spec_dir, exist_ok=True)
    with open(os.path.join(spec_dir, "kernel.json"), "w") as fh:
        json.dump({"argv": [sys.executable, "-S", "-s", "-P", "-m", "ipykernel_launcher",
                            "-f", "{connection_file}"],
                   "display_name": "Python (grading)", "language": "python"}, fh)
    runner = Runner(job, out)
    loop = asyncio.new_event_loop()
    broke = loop.run_until_complete(runner.execute())
    if broke:
        loop.run_until_complete(runner.replay())
    limit = int(job.get("max_output_bytes", 1_000_000))
    for cell in runner.nb.cells:
        if cell.get("cell_type") == "code":
            cell["outputs"] = cap(cell.get("outputs", []), limit)
    write_frame(out, {"executed": runner.nb, "events": runner.events[:20]})
    while True:
        msg = read_frame(inp)
        if msg is None or msg.get("op") == "bye":
            break
        req = {"op": msg["op"], "names": msg.get("names", []), "calls": msg.get("calls", []),
               "timeout_s": float(msg.get("timeout_s", runner.cell_timeout)),
               "max_value_bytes": int(job.get("max_value_bytes", 64 * 2**20))}
        answer = loop.run_until_complete(runner.ask(req, float(msg.get("limit_s", 60))))
        budget = runner.over_budget or (answer is not None and b'["budget",' in answer)
        write_frame(out, {"answer": base64.b64encode(answer).decode("ascii")
                          if answer is not None else None, "budget": bool(budget)})
    try:
        loop.run_until_complete(runner.client._async_cleanup_kernel())
    except Exception:
        pass
    return 0


def guarded_main():
    try:
        return main()
    except BaseException:  # report why, for the grader's incident log
        import traceback
        if _OUT:
            try:
                write_frame(_OUT[0], {"fatal": traceback.format_exc()[-3000:]})
            except Exception:
                pass
        return 3


if __name__ == "__main__":
    sys.exit(guarded_main())
