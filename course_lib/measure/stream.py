"""Lab (chapter 5): what the kernel path costs per message -- a one-way stream.

One process (the producer, this one) sends ``count`` messages of ``n`` bytes
to a second process (the consumer), one after the other, and the whole stream
is timed.  Nobody waits for an answer, so the number is the cost of the path
itself, not of the scheduler handing a core from one partner to the other
(what a ping-pong on a busy core measures).

``socket``
    through a Unix-domain ``SOCK_SEQPACKET`` socket pair: **one** ``send``
    system call per message in the producer and **one** ``recv`` in the
    consumer (a message-preserving socket, so a ``recv`` never returns two
    messages at once) -- each entering the kernel, copying the bytes into or
    out of a kernel buffer, taking the socket's lock, and waking the receiver
    when it sleeps.  This is the kernel path a network message takes without
    RDMA, minus the wire.
``shared-memory``
    through a ring of slots in a ``multiprocessing.shared_memory`` segment
    both processes map (up to 65536 slots or 4 MiB: at 8 B the producer can
    run about 10 ms of its work ahead, longer than a scheduler time slice,
    so it rarely waits for a consumer that lost its core): the producer copies a message
    into the next free slot and bumps its head counter, message by message;
    the consumer sees the head move, copies every waiting message out one by
    one and then bumps its tail counter.  **No system call** on the data
    path.  When the ring is empty (or full) the waiting side polls a little
    and then sleeps on a pipe; the other side wakes it with a one-byte write
    after a batch of up to 64 messages (or once the ring has room again) --
    batched wake-ups: a few system calls per thousand messages, counted -- so
    a partner with nothing to do never holds a busy core.

Both consumers check what arrived: the count and a checksum (the sum of
every message's sequence number); a stream that lost or repeated a message
fails the lab.  The variants run in rounds (socket, shared memory, then the
other order, ...) on partners started once, so load that comes and goes on
the machine falls on both alike; the median of the rounds is reported.

Per stream the lab reports:

``per_message_s``
    wall time of the stream divided by ``count``: what one message costs,
    start to end, on this machine as it is (other work included);
``cpu_per_message_s``
    CPU time both partners spent (user + system, ``getrusage`` per thread)
    divided by ``count``; ``sys_per_message_s`` is the system (kernel) part;
``syscalls_per_message``
    system calls made on the data path, counted by construction: 2 for the
    socket (a ``send`` and a ``recv``; checked with ``strace -f -c``: one
    ``sendto`` and one ``recvfrom`` per message), and for shared memory the
    wake-ups (a ``poll`` and a ``read`` per sleep, a ``write`` per wake-up;
    far below 1);
``context_switches_per_message``
    voluntary plus involuntary context switches of both partners
    (``getrusage``), per message.

The summary's ``per_message_ratio`` is socket over shared memory at the
smallest size (``cpu_ratio`` the same for CPU time).  :func:`busy_cpus`
starts CPU-bound processes beside the lab (and stops them), to see the
effect on a loaded machine; :func:`explain_stream` reads a run in sentences.

Measured on the course's 2-core test machine at 8 B, with two CPU-bound
processes beside the lab (unpinned), 40 runs: socket / shared memory 2.5x to
5.7x in wall time (median 4.7x), 3x to 6x in CPU time.  The wall ratio is
lowest where the scheduler puts both partners on one CPU (about 3x: there
the socket's two system calls cost about 1 us a message, the ring's two
Python copies about 0.3 us).

Safety: every wait has a deadline; the consumer process is joined (then
terminated, then killed) and the segment unlinked whatever happens.  The
ring's handshake relies on stores being seen in program order (x86).

Taught in chapter 5 (The High-Speed Rail).
"""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import struct
import time

import numpy as np

from ..units import check_choice, check_int, check_positive
from .harness import (LabResult, Timing, check_sizes, check_variants,
                      fit_alpha_beta, machine_info, progress_bar)
from .pingpong import _Waker, _context, _pin_self, cpu_situation

__all__ = ["kernel_stream_lab", "StreamPath", "SocketStream", "ShmStream",
           "busy_cpus", "explain_stream", "STREAM_VARIANTS",
           "STREAM_FULL_SIZES", "STREAM_QUICK_SIZES"]

STREAM_VARIANTS = ("socket", "shared-memory")
#: 8 B .. 32 KiB, every factor of 8.
STREAM_FULL_SIZES = (8, 64, 512, 4096, 32768)
#: 8 B and 4 KiB.
STREAM_QUICK_SIZES = (8, 4096)

_RING_BYTES = 4 << 20           # the ring's slots hold at most this many bytes
_MAX_SLOTS = 65536              # at 8 B: ~10 ms of the producer's work, past a time slice
_HEAD, _TAIL = 0, 8             # int64 counters on two different cache lines
_C_SLEEP, _P_SLEEP = 4, 12      # "the consumer / producer is asleep" flags
_HDR = 128
_SPINS = 64                     # polls before a waiting side goes to sleep
_BATCH = 64                     # messages written between looks at a sleeping consumer
_NAP_S = 1e-3                   # longest sleep: a wake-up missed by a race costs this
_IDLE_S = 120.0                 # a consumer with no command for this long exits
_RUSAGE = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)


def _usage():
    r = resource.getrusage(_RUSAGE)
    return np.array([r.ru_utime, r.ru_stime, r.ru_nvcsw + r.ru_nivcsw], float)


def _messages(path, n_bytes: int, target_s: float) -> int:
    """Messages per stream: about ``target_s`` seconds of the partners' CPU
    time, judged from a warm-up stream of 2000.  Counting CPU time rather than
    wall time keeps a stream long enough on a busy core too: it then spans
    many scheduler time slices, and the other work is averaged in, not hit or
    missed."""
    warm = path.stream(n_bytes, 2000)
    per = max(warm["cpu_s"] / 2000, 1e-8)
    return int(min(1_000_000, max(2000, target_s / per)))


def _kernel_timeouts(sock, timeout_s: float) -> None:
    """A blocking socket whose send and recv give up after ``timeout_s`` (the
    kernel's SO_SNDTIMEO / SO_RCVTIMEO): Python's own socket timeouts would add
    a ``poll`` system call before each call, which the lab does not count."""
    sock.settimeout(None)
    sec = int(timeout_s)
    tv = struct.pack("ll", sec, int((timeout_s - sec) * 1e6))
    for opt in (socket.SO_SNDTIMEO, socket.SO_RCVTIMEO):
        sock.setsockopt(socket.SOL_SOCKET, opt, tv)


# --- the consumer (runs in the helper process) ------------------------------
def _slots(n: int) -> int:
    """Slots in the ring for messages of ``n`` bytes."""
    return max(2, min(_MAX_SLOTS, _RING_BYTES // n))


def _consume_socket(sock, n, count, buf, timeout_s):
    view = memoryview(buf)[:n]
    seq = memoryview(buf)[:8].cast("q")
    recv_into = sock.recv_into
    got = total = 0
    for _ in range(count):
        if recv_into(view) != n:
            break
        total += seq[0]             # the checksum: every sequence number, added
        got += 1
    return got, total, 2 * count


def _consume_shm(ctrl, ring, n, count, slots, timeout_s, waker):
    out = bytearray(n)
    seq = memoryview(out)[:8].cast("q")
    end = slots * n
    t = off = total = calls = spins = 0
    deadline = None
    while t < count:
        h = ctrl[_HEAD]
        if h == t:
            spins += 1
            if spins >= _SPINS:         # nothing for a while: sleep until woken
                spins = 0
                ctrl[_C_SLEEP] = 1
                if ctrl[_HEAD] == t:    # announced, then looked again: still empty
                    waker.wait(_NAP_S)
                    calls += 2          # poll + read
                ctrl[_C_SLEEP] = 0
                now = time.monotonic()
                if deadline is None:
                    deadline = now + timeout_s
                elif now > deadline:
                    break
            continue
        spins = 0
        deadline = None
        while t < h:                    # every message waiting, one by one, up to the wrap
            stop = min(off + (h - t) * n, end)
            for o in range(off, stop, n):
                out[:] = ring[o:o + n]  # the copy out of the ring
                total += seq[0]
            t += (stop - off) // n
            off = 0 if stop == end else stop
        ctrl[_TAIL] = t                 # the slots are free again
        if ctrl[_P_SLEEP]:              # the producer sleeps on a full ring: room now
            ctrl[_P_SLEEP] = 0
            waker.wake()
            calls += 1
    return t, total, calls


def _consumer(kind, cmd, res, endpoint, max_bytes, timeout_s, cpu, pipes=None):
    _pin_self(cpu)
    ctrl = ring = waker = None
    if kind == "shared-memory":
        ctrl = endpoint.buf[:_HDR].cast("q")
        ring = endpoint.buf[_HDR:]
        waker = _Waker(*pipes)
    else:
        _kernel_timeouts(endpoint, timeout_s)
    buf = bytearray(max_bytes)
    try:
        while cmd.poll(max(_IDLE_S, timeout_s)):  # the other variant's turn may be long
            n, count = cmd.recv()
            if n < 0:
                break
            u0 = _usage()
            if kind == "socket":
                got, seq, calls = _consume_socket(endpoint, n, count, buf, timeout_s)
            else:
                got, seq, calls = _consume_shm(ctrl, ring, n, count, _slots(n), timeout_s,
                                               waker)
            res.send((got, seq, calls, *(_usage() - u0)))
    except (EOFError, OSError) as exc:     # tell the producer, which raises
        with contextlib.suppress(OSError):
            res.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        if ctrl is not None:
            ring.release()
            ctrl.release()
            try:
                endpoint.close()
            except BufferError:     # forked: the parent's views were inherited
                pass
        cmd.close()
        res.close()


# --- the producer side --------------------------------------------------------
class StreamPath:
    """A one-way stream to a consumer process; use as a context manager.

    ``stream(n, count)`` sends ``count`` messages of ``n`` bytes and returns
    a dict: ``wall_s``, ``cpu_s`` (both partners, user + system), ``sys_s``,
    ``syscalls`` (counted by construction), ``context_switches`` (both
    partners) and ``delivered`` (messages the consumer received intact in
    order: it checks the count and the last message's sequence number).
    """

    variant = ""

    def __init__(self, max_bytes: int, timeout_s: float = 10.0,
                 start_method: str | None = None, cpu: int | None = None):
        self.max_bytes = check_int(max_bytes, "max_bytes", minimum=8)
        self.timeout_s = check_positive(timeout_s, "timeout_s")
        self.cpu = cpu
        self.ctx = _context(start_method)
        self.proc = None
        self.payload = bytearray(os.urandom(self.max_bytes))
        self._seq = memoryview(self.payload)[:8].cast("q")

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def _start_consumer(self, endpoint, pipes=None):
        cmd_r, self._cmd = self.ctx.Pipe(duplex=False)
        self._res, res_w = self.ctx.Pipe(duplex=False)
        self.proc = self.ctx.Process(
            target=_consumer, args=(self.variant, cmd_r, res_w, endpoint,
                                    self.max_bytes, self.timeout_s, self.cpu,
                                    pipes), daemon=True)
        self.proc.start()
        cmd_r.close()
        res_w.close()
        for conn in pipes or ():
            conn.close()                # the consumer holds its own ends

    def stream(self, n_bytes: int, count: int) -> dict:
        n = check_int(n_bytes, "n_bytes", minimum=8)
        if n > self.max_bytes:
            raise ValueError(f"n_bytes must be <= max_bytes = {self.max_bytes}, got {n}")
        count = check_int(count, "count", minimum=1)
        self._reset()
        self._cmd.send((n, count))
        u0 = _usage()
        t0 = time.perf_counter()
        try:
            calls = self._produce(n, count)
        except OSError:
            if self._res.poll(1.0):             # the consumer's own words first
                reply = self._res.recv()
                if reply[0] == "error":
                    raise RuntimeError(f"the {self.variant} consumer process failed: "
                                       f"{reply[1]}") from None
            raise
        if not self._res.poll(self.timeout_s + count * 1e-3):
            raise TimeoutError(f"the consumer did not finish a stream of {count} "
                               f"messages within the timeout")
        reply = self._res.recv()
        if reply[0] == "error":
            raise RuntimeError(f"the {self.variant} consumer process failed: {reply[1]}")
        got, seq, their_calls, cu, cs, cc = reply
        wall = time.perf_counter() - t0
        mu, ms, mc = _usage() - u0
        return {"wall_s": wall, "cpu_s": mu + ms + cu + cs, "sys_s": ms + cs,
                "syscalls": calls + their_calls if self.variant != "socket"
                else their_calls, "context_switches": mc + cc,
                "delivered": got if seq == count * (count - 1) // 2 else 0}

    def _join(self) -> None:
        if self.proc is None:
            return
        self.proc.join(timeout=min(self.timeout_s, 5.0))
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(timeout=2.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(timeout=2.0)
        self.proc = None

    def _stop_consumer(self):
        cmd = getattr(self, "_cmd", None)
        if cmd is not None:
            try:
                cmd.send((-1, 0))
            except OSError:
                pass
        self._join()
        for name in ("_cmd", "_res"):
            c = getattr(self, name, None)
            if c is not None:
                c.close()
                setattr(self, name, None)


class SocketStream(StreamPath):
    """The kernel path: one ``send`` and one ``recv`` system call per message
    over a Unix-domain ``SOCK_SEQPACKET`` socket pair."""

    variant = "socket"

    def start(self):
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        _kernel_timeouts(self.sock, self.timeout_s)
        self._start_consumer(theirs)
        theirs.close()

    def _reset(self):
        pass

    def _produce(self, n, count):
        send = self.sock.send
        view = memoryview(self.payload)[:n]
        seq = self._seq
        for i in range(count):
            seq[0] = i
            send(view)
        return 0        # the consumer counts both calls per message (2 * count)

    def close(self):
        self._stop_consumer()
        sock = getattr(self, "sock", None)
        if sock is not None:
            sock.close()
            self.sock = None


class ShmStream(StreamPath):
    """Kernel bypass: a ring of slots in shared memory, head and tail
    counters, no system call per message."""

    variant = "shared-memory"

    def start(self):
        from multiprocessing import shared_memory

        self.shm = shared_memory.SharedMemory(
            create=True, size=_HDR + max(_slots(8) * 8, _RING_BYTES, self.max_bytes * 2))
        self.ctrl = self.shm.buf[:_HDR].cast("q")
        self.ring = self.shm.buf[_HDR:]
        # batched wake-ups: a side that found nothing to do for a while sleeps on a
        # pipe, and the other writes one byte to wake it (a system call, counted)
        c_r, c_w = self.ctx.Pipe(duplex=False)
        p_r, p_w = self.ctx.Pipe(duplex=False)
        self.waker = _Waker(p_r, c_w)
        self._start_consumer(self.shm, (c_r, p_w))

    def _reset(self):
        for i in (_HEAD, _TAIL, _C_SLEEP, _P_SLEEP):   # before the consumer is told
            self.ctrl[i] = 0

    def _produce(self, n, count):
        ctrl, ring, seq, waker = self.ctrl, self.ring, self._seq, self.waker
        slots = _slots(n)
        end = slots * n
        msg = memoryview(self.payload)[:n]
        calls = spins = 0
        deadline = None
        h = off = 0
        room = slots                # slots known to be free (the tail read last time)
        while h < count:
            if room == 0:
                room = slots - (h - ctrl[_TAIL])
            if room == 0:                       # ring full: wait for the consumer
                spins += 1
                if spins >= _SPINS:
                    spins = 0
                    ctrl[_P_SLEEP] = 1
                    if h - ctrl[_TAIL] >= slots:
                        waker.wait(_NAP_S)
                        calls += 2
                    ctrl[_P_SLEEP] = 0
                    now = time.monotonic()
                    if deadline is None:
                        deadline = now + self.timeout_s
                    elif now > deadline:
                        raise TimeoutError("the consumer stopped taking messages "
                                           "from the shared-memory ring")
                continue
            spins = 0
            deadline = None
            # up to a batch of messages, one by one: each copied into its slot and
            # published (the head moves) before the next
            k = min(room, count - h, _BATCH, (end - off) // n)
            room -= k
            for o in range(off, off + k * n, n):
                seq[0] = h
                ring[o:o + n] = msg
                h += 1
                ctrl[_HEAD] = h
            off += k * n
            if off == end:
                off = 0
            if ctrl[_C_SLEEP]:                  # a batch waits for a sleeping consumer
                ctrl[_C_SLEEP] = 0
                waker.wake()
                calls += 1
        return calls

    def close(self):
        self._stop_consumer()
        if getattr(self, "waker", None) is not None:
            self.waker.close()
            self.waker = None
        shm = getattr(self, "shm", None)
        if shm is None:
            return
        self.ring.release()
        self.ctrl.release()
        shm.close()
        try:
            shm.unlink()
        except FileNotFoundError:
            pass
        self.shm = None


_CLASSES = {"socket": SocketStream, "shared-memory": ShmStream}


# --- load beside the lab ------------------------------------------------------
def _burn(deadline_s, cpu):
    _pin_self(cpu)
    end = time.monotonic() + deadline_s
    x = 0
    while time.monotonic() < end:
        for _ in range(10000):
            x += 1


@contextlib.contextmanager
def busy_cpus(n: int = 2, cpu: int | None = None, max_s: float = 300.0):
    """Run ``n`` CPU-bound processes (pure Python loops) while the block runs,
    optionally all pinned to ``cpu``; they are stopped on exit (and stop by
    themselves after ``max_s`` seconds whatever happens).

    >>> with busy_cpus(1, max_s=5) as procs:
    ...     len(procs), procs[0].is_alive()
    (1, True)
    """
    n = check_int(n, "n", minimum=0)
    max_s = check_positive(max_s, "max_s")
    ctx = _context(None)
    procs = [ctx.Process(target=_burn, args=(max_s, cpu), daemon=True) for _ in range(n)]
    try:
        for p in procs:
            p.start()
        yield procs
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join(timeout=2)


# --- the lab --------------------------------------------------------------------
def kernel_stream_lab(sizes_bytes=None, *, quick: bool = False,
                      variants=STREAM_VARIANTS, repeats: int | None = None,
                      count: int | None = None, target_s: float | None = None,
                      timeout_s: float = 10.0,
                      progress: bool = True, start_method: str | None = None,
                      cpu: int | None = None, busy: int = 0) -> LabResult:
    """Per-message cost of a one-way stream: the kernel path vs shared memory.

    Parameters
    ----------
    sizes_bytes : sequence of int, optional
        Message sizes, bytes (>= 8).  Default :data:`STREAM_FULL_SIZES`
        (8 B .. 32 KiB) or, quick, :data:`STREAM_QUICK_SIZES`.
    quick : bool
        Two sizes, shorter streams: about a second (a few beside busy processes).
    variants : sequence of str
        Any of :data:`STREAM_VARIANTS`.
    repeats : int, optional
        Rounds per size (default 5): every variant streams once per round,
        the order alternating, and the median of the rounds is reported.
    count : int, optional
        Messages per stream (default: ``target_s`` seconds' worth, judged
        from a warm-up stream).
    target_s : float, optional
        CPU time one stream should take (default 0.05 s, quick 0.03 s); on a
        busy machine its wall time is longer.
    timeout_s : float
        Longest wait for the partner at any step, seconds.
    cpu : int, optional
        Run both partners on this one CPU (what Binder's single shared core
        looks like); default: wherever the scheduler puts them.
    busy : int
        Start this many CPU-bound processes beside the lab for its duration
        (on ``cpu`` when given) and stop them at the end; 0 by default.

    Returns
    -------
    LabResult
        Records per variant and size: ``per_message_s`` (= ``median_s``),
        ``cpu_per_message_s``, ``sys_per_message_s``,
        ``syscalls_per_message``, ``context_switches_per_message``,
        ``count``.  Summary at the smallest size: ``socket_per_message_s``,
        ``shm_per_message_s``, ``per_message_ratio`` (socket / shared
        memory), ``cpu_ratio``, ``socket_syscalls_per_message``,
        ``shm_syscalls_per_message``; with two sizes or more, fits of
        ``per_message_s = alpha + n / B`` per variant (``fits``,
        ``socket_alpha_s``, ``shm_alpha_s``).
    """
    if sizes_bytes is None:
        sizes_bytes = STREAM_QUICK_SIZES if quick else STREAM_FULL_SIZES
    sizes = check_sizes(sizes_bytes, minimum=8)
    variants = check_variants(variants, STREAM_VARIANTS)
    repeats = check_int(repeats if repeats is not None else 5,
                        "repeats", minimum=1)
    if count is not None:
        count = check_int(count, "count", minimum=1)
    timeout_s = check_positive(timeout_s, "timeout_s")
    target_s = check_positive(target_s if target_s is not None else
                              (0.03 if quick else 0.05), "target_s")
    if start_method is not None:
        start_method = check_choice(start_method, "start_method",
                                    ["fork", "spawn", "forkserver"])
    situation = cpu_situation()
    if cpu is not None:
        cpu = check_int(cpu, "cpu", minimum=0)
        if cpu not in situation["cpus"]:
            raise ValueError(f"cpu must be one of the CPUs this process may use, "
                             f"{situation['cpus']}; got {cpu}")
    busy = check_int(busy, "busy", minimum=0)
    lab = "kernel-bypass"
    result = LabResult(name=lab, metadata=machine_info(), plot_y="per_message_s")
    result.metadata.update({"quick": quick, "repeats": repeats, "design": "one-way stream",
                            "median_s": "wall time per message", "cpu": cpu,
                            "busy_processes": busy})
    result.metadata.update({k: v for k, v in situation.items() if k != "cpus"})
    bar = progress_bar(range(len(sizes) * len(variants)),
                       total=len(sizes) * len(variants), desc=lab, disable=not progress)
    it = iter(bar)
    saved = os.sched_getaffinity(0) if cpu is not None else None
    records = {v: [] for v in variants}
    try:
        with busy_cpus(busy, cpu):
            if cpu is not None:
                os.sched_setaffinity(0, {cpu})
            with contextlib.ExitStack() as stack:
                paths = {v: stack.enter_context(_CLASSES[v](max(sizes), timeout_s,
                                                            start_method, cpu))
                         for v in variants}
                for n in sizes:
                    k = {v: count or _messages(p, n, target_s) for v, p in paths.items()}
                    runs = {v: [] for v in variants}
                    for i in range(repeats):    # rounds: every variant once, order alternating
                        for v in (variants if i % 2 == 0 else variants[::-1]):
                            runs[v].append(paths[v].stream(n, k[v]))
                    for v in variants:
                        bad = [r for r in runs[v] if r["delivered"] != k[v]]
                        if bad:
                            raise RuntimeError(f"kernel-bypass lab: {v} delivered "
                                               f"{bad[0]['delivered']} of {k[v]} messages "
                                               f"of {n} B")
                        records[v].append(_record(lab, v, n, k[v], runs[v]))
                        next(it, None)
            for v in variants:
                result.records.extend(records[v])
    finally:
        if saved is not None:
            os.sched_setaffinity(0, saved)
        if hasattr(bar, "close"):
            bar.close()
    _summarise(result)
    return result


def _record(lab, variant, n, k, runs) -> dict:
    per = [r["wall_s"] / k for r in runs]
    t = Timing.from_samples(per)
    med = lambda key: float(np.median([r[key] for r in runs])) / k  # noqa: E731
    rec = {"lab": lab, "variant": variant, "n_bytes": int(n)}
    rec.update(t.as_record())
    rec.update({"per_message_s": t.median_s, "bw_bytes_per_s": n / t.median_s,
                "cpu_per_message_s": med("cpu_s"), "sys_per_message_s": med("sys_s"),
                "syscalls_per_message": med("syscalls"),
                "context_switches_per_message": med("context_switches"),
                "count": k, "samples_s": per})
    return rec


def _summarise(result: LabResult) -> None:
    short = {"socket": "socket", "shared-memory": "shm"}
    for v in result.variants():
        rows = result.select(v)
        r = rows[0]
        key = short[v]
        if len(rows) >= 2:          # per message = alpha + n / B
            fit = fit_alpha_beta([x["n_bytes"] for x in rows],
                                 [x["per_message_s"] for x in rows])
            result.fits[v] = fit
            result.summary[f"{key}_alpha_s"] = fit.alpha_s
            result.summary[f"{key}_fit_bw_bytes_per_s"] = fit.bw_bytes_per_s
        for f in ("per_message_s", "cpu_per_message_s", "sys_per_message_s",
                  "syscalls_per_message", "context_switches_per_message"):
            result.summary[f"{key}_{f}"] = r[f]
        result.summary[f"{key}_per_message_spread_s"] = r["spread_s"]
    s = result.summary
    if "socket_per_message_s" in s and "shm_per_message_s" in s:
        s["per_message_ratio"] = s["socket_per_message_s"] / s["shm_per_message_s"]
        s["cpu_ratio"] = s["socket_cpu_per_message_s"] / s["shm_cpu_per_message_s"]
        s["smallest_n_bytes"] = result.records[0]["n_bytes"]


def explain_stream(result: LabResult) -> str:
    """The learner's stream run in sentences (Markdown), read from its numbers."""
    from ..units import format_time

    s, m = result.summary, result.metadata
    if "per_message_ratio" not in s:
        return "Run both variants (socket and shared-memory) to compare them."
    ratio = s["per_message_ratio"]
    size = s["smallest_n_bytes"]
    load = m.get("load_average_1min")
    where = (f"both partners on CPU {m['cpu']}" if m.get("cpu") is not None
             else "partners wherever the scheduler put them")
    busy = m.get("busy_processes") or 0
    lines = [
        f"{size} B messages, one way: **socket {format_time(s['socket_per_message_s'])}**"
        f" per message, **shared memory {format_time(s['shm_per_message_s'])}** — "
        f"socket / shared memory = **{ratio:.1f}**.  ({m.get('cpus_available')} CPU(s) "
        f"available, load average {load:.2f} at the start" if load is not None else
        f"{size} B messages, one way: socket / shared memory = **{ratio:.1f}** (",
    ]
    lines[0] += (f"; {where}; {busy} CPU-bound process{'es' if busy != 1 else ''} "
                 f"running beside.)")
    lines.append(
        f"System calls on the data path, per message: socket "
        f"**{s['socket_syscalls_per_message']:.0f}** (a `send` and a `recv`), shared "
        f"memory **{s['shm_syscalls_per_message']:.3g}** (only the batched wake-ups of a "
        f"side with nothing to do).  Time in the kernel per message: socket "
        f"{format_time(s['socket_sys_per_message_s'])}, shared memory "
        f"{format_time(s['shm_sys_per_message_s'])}.")
    if ratio >= 2:
        lines.append("Every message through the kernel pays for entering it twice, a copy "
                     "into and out of a kernel buffer and the socket's bookkeeping; the "
                     "ring pays for two copies in user space (into its slot and out of it) and no "
                     "kernel entry.  RDMA removes the same work "
                     "between machines: the NIC reads and writes the application's memory.")
    else:
        lines.append("The gap is smaller than usual here: compare the CPU time per message "
                     f"(socket / shared memory = {s['cpu_ratio']:.1f}), which the other work "
                     "on the machine does not inflate.")
    return "\n\n".join(lines)
