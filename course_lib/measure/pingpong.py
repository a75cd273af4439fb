"""Lab ``pingpong`` (chapter 5): round trips over the kernel path vs shared memory.

The chapter's main kernel-bypass lab is the one-way stream of
:mod:`course_lib.measure.stream` (robust on a busy core); this one measures
the round trip, which on a busy core also measures the scheduler.

Two processes on this machine play ping-pong: one sends ``n`` bytes, the
other sends them back, and the round trip is timed.

``tcp-loopback``
    over a TCP socket on 127.0.0.1 (``TCP_NODELAY``).  Every message goes
    through the kernel: a system call to send, a copy into kernel buffers, the
    TCP/IP stack, a wake-up of the receiver, a system call and a copy out --
    the path a network message takes without RDMA.
``shared-memory``
    through a ``multiprocessing.shared_memory`` segment: the sender copies the
    payload into the segment and bumps a sequence number; the receiver
    notices the new number, copies the payload back and bumps its own.  No
    socket, no protocol stack and no kernel copy on the data path -- the idea
    behind RDMA's kernel bypass (the NIC writes straight into the
    application's registered memory).

How a partner notices a message decides what the learner sees on a busy
machine.  Kernel bypass assumes a core that *polls* (RDMA applications poll
their completion queue on a core of their own): ``wait="spin"`` does that,
with the two partners pinned to two different CPUs.  On one or two busy cores
(Binder gives about one) a polling partner holds the core its partner needs,
each message then waits for a scheduler time slice, and shared memory comes
out far *slower* than TCP (round trips of milliseconds: ratios of 0.02 were
seen).  So ``wait="auto"`` (the default) checks the CPUs first
(:func:`cpu_situation`: ``os.sched_getaffinity`` and the load average) and,
with fewer than two free CPUs, makes the partners sleep instead
(``wait="block"``): a one-byte write to a pipe wakes the partner -- a system
call, and the scheduler hands the CPU over at once, as it does for a socket --
while the payload still bypasses the kernel.  The result records the choice and the
CPU situation; :func:`explain_kernel_bypass` says in words what the numbers
show, including why a ratio below 1 happens.

Each sample times ``number`` round trips; ``median_s`` is the **round-trip**
time, ``one_way_s = median_s / 2`` and ``bw_bytes_per_s = 2 n / median_s``
(bytes per second, one way).  Fits of ``one_way_s = alpha + n / B`` give the
one-way latency alpha of each path.

Safety: 127.0.0.1 only; every socket has a timeout, every spin loop a deadline;
the helper process is joined (then terminated, then killed) and the shared
memory unlinked whatever happens.  The spin handshake relies on stores being
seen in program order (true on x86); on weakly ordered CPUs the timing stays
meaningful but a payload could in principle be read early.

Taught in chapter 5 (The High-Speed Rail).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import socket
import sys
import threading
import time

import numpy as np

from ..units import check_choice, check_int, check_positive
from .harness import (LabResult, check_sizes, fit_alpha_beta, machine_info,
                      progress_bar, rate_record, time_call)

__all__ = ["kernel_bypass_lab", "PingPong", "TcpPingPong", "ShmPingPong",
           "cpu_situation", "explain_kernel_bypass", "WAIT_MODES",
           "PINGPONG_VARIANTS", "PINGPONG_FULL_SIZES", "PINGPONG_QUICK_SIZES"]

PINGPONG_VARIANTS = ("tcp-loopback", "shared-memory")
#: How the shared-memory partners wait: spin on a core each, or sleep on a
#: one-byte pipe (``"auto"`` picks from the free cores, :func:`cpu_situation`).
WAIT_MODES = ("spin", "block")
#: 8 B .. 2 MiB, every factor of 8.
PINGPONG_FULL_SIZES = tuple(8**k for k in range(1, 8))
#: 8 B, 4 KiB, 64 KiB.
PINGPONG_QUICK_SIZES = (8, 4096, 65536)

_HDR = 128                      # control block: two cache lines of int64
_REQ_SEQ, _REQ_LEN, _RESP_SEQ = 0, 1, 8
_SPIN_CHECK = 1024             # spins between deadline checks
_YIELD_EVERY = 256             # spins between yields while spinning on a core of its own


_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def _spin(ctrl, index: int, done, timeout_s: float, waiting_for: str) -> int:
    """Spin until ``done(ctrl[index])``; return that value.  Yield the CPU now
    and then, and raise TimeoutError after ``timeout_s`` seconds."""
    spins = 0
    deadline = None
    while True:
        v = ctrl[index]
        if done(v):
            return v
        spins += 1
        if spins % _YIELD_EVERY == 0:
            _yield()
        if spins % _SPIN_CHECK == 0:
            now = time.monotonic()
            if deadline is None:
                deadline = now + timeout_s
            elif now > deadline:
                raise TimeoutError(f"no {waiting_for} through shared memory within "
                                   f"{timeout_s} s")


def _spin_until(ctrl, index: int, value: int, timeout_s: float) -> None:
    """Spin until ``ctrl[index] == value`` (the client waiting for an answer)."""
    _spin(ctrl, index, lambda v: v == value, timeout_s, "answer")


def _spin_until_changed(ctrl, index: int, old: int, timeout_s: float) -> int:
    """Spin until ``ctrl[index] != old`` (the server waiting for a request)."""
    return _spin(ctrl, index, lambda v: v != old, timeout_s, "request")


# --- the echo servers (run in the helper process) ---------------------------
def _recv_exact(sock: socket.socket, view: memoryview) -> None:
    got, n = 0, len(view)
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("peer closed the connection")
        got += k


def _pin_self(cpu) -> None:
    """Run this process on one CPU only (when the lab pins the partners)."""
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {cpu})
        except OSError:
            pass


def _tcp_echo_server(pipe, max_bytes: int, timeout_s: float, cpu=None) -> None:
    _pin_self(cpu)
    srv = socket.create_server(("127.0.0.1", 0))
    try:
        srv.settimeout(timeout_s)
        pipe.send(srv.getsockname()[1])
        conn, _ = srv.accept()
        with conn:
            conn.settimeout(timeout_s)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            buf = memoryview(bytearray(max(max_bytes, 1)))
            hdr = memoryview(bytearray(8))
            while True:
                _recv_exact(conn, hdr)
                n = int.from_bytes(hdr, "little", signed=True)
                if n < 0:
                    break
                _recv_exact(conn, buf[:n])
                conn.sendall(buf[:n])
    except (OSError, ConnectionError):
        pass                    # the parent reports what went wrong
    finally:
        srv.close()
        pipe.close()


class _Waker:
    """The blocking wait of one side: sleep until a wake-up byte arrives on
    ``inbox`` (a pipe's read end); ``wake()`` writes one to ``outbox``.
    One ``poll`` object, made once: a wait costs two system calls."""

    def __init__(self, inbox, outbox):
        import select

        self.inbox, self.outbox = inbox, outbox
        self.fd_in, self.fd_out = inbox.fileno(), outbox.fileno()
        self.poller = select.poll()
        self.poller.register(self.fd_in, select.POLLIN)

    def wait(self, timeout_s: float) -> bool:
        """False when nothing came within ``timeout_s`` (or the peer is gone)."""
        if not self.poller.poll(timeout_s * 1000.0):
            return False
        return bool(os.read(self.fd_in, 1))

    def wake(self) -> None:
        os.write(self.fd_out, b"\x01")

    def close(self) -> None:
        self.inbox.close()
        self.outbox.close()


def _shm_echo_server(shm, max_bytes: int, timeout_s: float, cpu=None,
                     pipes=None) -> None:
    _pin_self(cpu)
    waker = _Waker(*pipes) if pipes is not None else None
    ctrl = shm.buf[:_HDR].cast("q")
    a = np.frombuffer(shm.buf, np.uint8, count=max_bytes, offset=_HDR)
    b = np.frombuffer(shm.buf, np.uint8, count=max_bytes, offset=_HDR + max_bytes)
    try:
        last = 0                # the parent zeroed the block before starting us
        while True:
            if waker is not None and not waker.wait(timeout_s):
                break           # blocking mode: sleep until the client wakes us
            last = _spin_until_changed(ctrl, _REQ_SEQ, last, timeout_s)
            n = ctrl[_REQ_LEN]
            if n < 0:
                ctrl[_RESP_SEQ] = last
                if waker is not None:
                    waker.wake()
                break
            np.copyto(b[:n], a[:n])
            ctrl[_RESP_SEQ] = last
            if waker is not None:
                waker.wake()
    except TimeoutError:
        pass
    finally:
        del a, b
        ctrl.release()
        try:
            shm.close()
        except BufferError:     # forked: the parent's views were inherited
            pass


# --- the client side -------------------------------------------------------
def _context(start_method: str | None):
    if start_method is None:
        start_method = ("fork" if sys.platform.startswith("linux")
                        and threading.active_count() == 1 else "spawn")
    return mp.get_context(start_method)


class PingPong:
    """A ping-pong partner in a helper process; use as a context manager.

    ``rtt(n)`` sends ``n`` bytes and waits for them to come back.
    """

    variant = ""

    def __init__(self, max_bytes: int, timeout_s: float = 10.0,
                 start_method: str | None = None, partner_cpu: int | None = None,
                 wait: str = "spin"):
        self.max_bytes = check_int(max_bytes, "max_bytes", minimum=1)
        self.partner_cpu = partner_cpu
        self.wait = check_choice(wait, "wait", WAIT_MODES)
        self.timeout_s = check_positive(timeout_s, "timeout_s")
        self.ctx = _context(start_method)
        self.proc = None
        self.payload = np.frombuffer(os.urandom(self.max_bytes), dtype=np.uint8).copy()
        self.received = np.zeros(self.max_bytes, dtype=np.uint8)

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

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

    def check_echo(self, n_bytes: int) -> bool:
        """True when the last echo of ``n_bytes`` came back intact."""
        return bool(np.array_equal(self.received[:n_bytes], self.payload[:n_bytes]))


class TcpPingPong(PingPong):
    """Ping-pong over a loopback TCP socket (the kernel path)."""

    variant = "tcp-loopback"

    def start(self):
        parent, child = self.ctx.Pipe(duplex=False)
        self.proc = self.ctx.Process(target=_tcp_echo_server,
                                     args=(child, self.max_bytes, self.timeout_s,
                                           self.partner_cpu),
                                     daemon=True)
        self.proc.start()
        child.close()
        if not parent.poll(self.timeout_s + 30):
            raise TimeoutError("the TCP echo process did not start in time")
        port = parent.recv()
        parent.close()
        self.sock = socket.create_connection(("127.0.0.1", port),
                                             timeout=self.timeout_s)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._pview = memoryview(self.payload)
        self._rview = memoryview(self.received)
        self._hdrs: dict[int, bytes] = {}

    def rtt(self, n_bytes: int) -> None:
        hdr = self._hdrs.get(n_bytes)
        if hdr is None:
            hdr = self._hdrs[n_bytes] = n_bytes.to_bytes(8, "little", signed=True)
        sent = self.sock.sendmsg([hdr, self._pview[:n_bytes]])
        if sent < 8 + n_bytes:              # a partial send of a large message
            rest = (hdr + bytes(self._pview[:n_bytes]))[sent:]
            self.sock.sendall(rest)
        _recv_exact(self.sock, self._rview[:n_bytes])

    def close(self):
        sock = getattr(self, "sock", None)
        if sock is not None:
            try:
                sock.sendall((-1).to_bytes(8, "little", signed=True))
            except OSError:
                pass
            sock.close()
            self.sock = None
        self._join()


class ShmPingPong(PingPong):
    """Ping-pong through shared memory with a spin handshake (kernel bypass)."""

    variant = "shared-memory"

    def start(self):
        from multiprocessing import shared_memory
        self.shm = shared_memory.SharedMemory(create=True,
                                              size=_HDR + 2 * self.max_bytes)
        self.ctrl = self.shm.buf[:_HDR].cast("q")
        for i in range(len(self.ctrl)):
            self.ctrl[i] = 0
        self.a = np.frombuffer(self.shm.buf, np.uint8, count=self.max_bytes,
                               offset=_HDR)
        self.b = np.frombuffer(self.shm.buf, np.uint8, count=self.max_bytes,
                               offset=_HDR + self.max_bytes)
        self.seq = 0
        # blocking mode: a one-byte pipe per direction wakes the sleeping
        # partner (a pipe wake-up hands the CPU over at once, like a socket's)
        self.waker = None
        child_pipes = None
        if self.wait == "block":
            req_r, req_w = self.ctx.Pipe(duplex=False)
            resp_r, resp_w = self.ctx.Pipe(duplex=False)
            self.waker = _Waker(resp_r, req_w)
            child_pipes = (req_r, resp_w)
        self.proc = self.ctx.Process(target=_shm_echo_server,
                                     args=(self.shm, self.max_bytes, self.timeout_s,
                                           self.partner_cpu, child_pipes),
                                     daemon=True)
        self.proc.start()
        for conn in child_pipes or ():
            conn.close()                    # the child holds its own ends

    def rtt(self, n_bytes: int) -> None:
        ctrl = self.ctrl
        np.copyto(self.a[:n_bytes], self.payload[:n_bytes])
        self.seq += 1
        ctrl[_REQ_LEN] = n_bytes
        ctrl[_REQ_SEQ] = self.seq
        if self.waker is not None:
            self.waker.wake()
            if not self.waker.wait(self.timeout_s):
                raise TimeoutError(f"no answer through shared memory within "
                                   f"{self.timeout_s} s")
        _spin_until(ctrl, _RESP_SEQ, self.seq, self.timeout_s)
        np.copyto(self.received[:n_bytes], self.b[:n_bytes])

    def close(self):
        shm = getattr(self, "shm", None)
        if shm is None:
            self._join()
            return
        try:
            if self.proc is not None and self.proc.is_alive():
                self.seq += 1
                self.ctrl[_REQ_LEN] = -1
                self.ctrl[_REQ_SEQ] = self.seq
                if self.waker is not None:
                    try:
                        self.waker.wake()
                    except OSError:
                        pass
                try:
                    _spin_until(self.ctrl, _RESP_SEQ, self.seq, 2.0)
                except TimeoutError:
                    pass
        finally:
            self._join()
            if self.waker is not None:
                self.waker.close()
                self.waker = None
            self.a = self.b = None
            self.ctrl.release()
            shm.close()
            try:
                shm.unlink()
            except FileNotFoundError:
                pass
            self.shm = None


_CLASSES = {"tcp-loopback": TcpPingPong, "shared-memory": ShmPingPong}


def cpu_situation() -> dict:
    """How many CPUs this process may use and how busy the machine is.

    Returns ``cpus_available`` (``os.sched_getaffinity``), ``load_average_1min``
    (``os.getloadavg``; None where unknown), ``free_cpus`` (available minus
    load, floored at 0) and ``oversubscribed``: True when fewer than two CPUs
    are free for the two ping-pong partners -- then a partner that spins
    holds a core the other one needs.
    """
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = list(range(os.cpu_count() or 1))
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = None
    free = max(0.0, len(cpus) - (load or 0.0))
    return {"cpus": cpus, "cpus_available": len(cpus), "load_average_1min": load,
            "free_cpus": free, "oversubscribed": len(cpus) < 2 or free < 1.5}


class _Placement:
    """Pin this process and its partner to two different CPUs for the lab
    (restoring this process's CPU set afterwards), or leave them be."""

    def __init__(self, cpus):
        self.cpus = cpus
        self.saved = None

    @property
    def partner(self):
        return self.cpus[1] if self.cpus else None

    def __enter__(self):
        if self.cpus:
            self.saved = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {self.cpus[0]})
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            os.sched_setaffinity(0, self.saved)


def kernel_bypass_lab(sizes_bytes=None, *, quick: bool = False,
                      variants=PINGPONG_VARIANTS, repeats: int | None = None,
                      number: int | None = None, warmup: int = 1,
                      budget_s: float | None = None, timeout_s: float = 10.0,
                      progress: bool = True, start_method: str | None = None,
                      wait: str = "auto", pin: bool | None = None) -> LabResult:
    """Round-trip latency and bandwidth: loopback TCP vs shared memory.

    Parameters
    ----------
    sizes_bytes : sequence of int, optional
        Message sizes, bytes (>= 1).  Default :data:`PINGPONG_FULL_SIZES`
        (8 B .. 2 MiB) or, quick, :data:`PINGPONG_QUICK_SIZES`.
    quick : bool
        Few sizes and repeats: a couple of seconds.
    variants : sequence of str
        Any of :data:`PINGPONG_VARIANTS`.
    repeats : int, optional
        Samples per point (default 7, quick 5).
    number : int, optional
        Round trips per sample (default 50 up to 64 KiB and 5 above; quick 10/3).
    warmup : int
        Untimed samples first.
    budget_s : float, optional
        Time budget per point, seconds (default 2, quick 0.5).
    timeout_s : float
        Longest wait for the partner process at any step, seconds.
    progress : bool
        Show a progress bar.
    start_method : str, optional
        ``"fork"`` or ``"spawn"``; default fork on Linux when no other
        thread runs, else spawn.
    wait : {"auto", "spin", "block"}
        How the shared-memory partners wait for each other.  ``"spin"``
        polls the sequence number (no system call at all: how RDMA
        applications poll their completion queues, each on a core of its
        own); ``"block"`` sleeps on a one-byte pipe, so a waiting partner
        gives its core away (a system call to wake it per message, but
        still no socket, no protocol stack and no copy of the payload by
        the kernel).  ``"auto"``: spin when at least two CPUs are free
        (:func:`cpu_situation`), else block.
    pin : bool, optional
        Pin the two partners (both variants) to two different CPUs; default:
        when spinning on a machine with two or more available CPUs.

    Returns
    -------
    LabResult
        Summary: ``tcp_rtt_s`` and ``shm_rtt_s`` (round trip at the smallest
        size), ``latency_ratio`` (TCP over shared memory), one-way
        bandwidths at the largest size, and the fitted one-way alpha and B of
        each path.  Metadata: ``wait``, ``pinned_cpus``, and the CPU
        situation at the start (``cpus_available``, ``load_average_1min``,
        ``free_cpus``, ``oversubscribed``).  :func:`explain_kernel_bypass`
        turns it into sentences.

    Notes
    -----
    One way: ``T = alpha + n / B``; a round trip is twice that.  Chapter 5.
    """
    if sizes_bytes is None:
        sizes_bytes = PINGPONG_QUICK_SIZES if quick else PINGPONG_FULL_SIZES
    sizes = check_sizes(sizes_bytes, minimum=1)
    if isinstance(variants, str):
        variants = (variants,)
    variants = [check_choice(v, "variants", PINGPONG_VARIANTS) for v in variants]
    repeats = check_int(repeats if repeats is not None else (5 if quick else 7),
                        "repeats", minimum=1)
    if number is not None:
        number = check_int(number, "number", minimum=1)
    budget_s = check_positive(budget_s if budget_s is not None else
                              (0.5 if quick else 2.0), "budget_s")
    timeout_s = check_positive(timeout_s, "timeout_s")
    if start_method is not None:
        start_method = check_choice(start_method, "start_method",
                                    ["fork", "spawn", "forkserver"])
    wait = check_choice(wait, "wait", ("auto",) + WAIT_MODES)
    if pin is not None and not isinstance(pin, bool):
        raise TypeError(f"pin must be True, False or None, got {pin!r}")
    situation = cpu_situation()
    if wait == "auto":
        wait = "block" if situation["oversubscribed"] else "spin"
    if pin is None:
        pin = wait == "spin" and situation["cpus_available"] >= 2
    pinned = (situation["cpus"][-2:] if pin and situation["cpus_available"] >= 2
              and hasattr(os, "sched_setaffinity") else None)
    lab = "pingpong"
    result = LabResult(name=lab, metadata=machine_info(), plot_y="one_way_s")
    result.metadata.update({"quick": quick, "repeats": repeats, "budget_s": budget_s,
                            "median_s": "round trip", "transport_host": "127.0.0.1",
                            "wait": wait, "pinned_cpus": pinned})
    result.metadata.update({k: v for k, v in situation.items() if k != "cpus"})
    bad_echo = []
    bar = progress_bar(range(len(sizes) * len(variants)),
                       total=len(sizes) * len(variants), desc="pingpong",
                       disable=not progress)
    it = iter(bar)
    place = _Placement(pinned)
    for variant in variants:
        with place, _CLASSES[variant](max(sizes), timeout_s, start_method,
                                      partner_cpu=place.partner, wait=wait) as pp:
            for n in sizes:
                k = number or ((10 if n <= 65536 else 3) if quick
                               else (50 if n <= 65536 else 5))
                t = time_call(lambda: pp.rtt(n), warmup=warmup, repeats=repeats,
                              number=k, budget_s=budget_s)
                if not pp.check_echo(n):
                    bad_echo.append((variant, n))
                result.records.append(rate_record(
                    lab, variant, n, t, bytes_moved=2 * n,
                    one_way_s=t.median_s / 2, round_trips_per_sample=k))
                next(it, None)
    if hasattr(bar, "close"):
        bar.close()
    if bad_echo:
        raise RuntimeError(f"kernel-bypass lab: echoes came back corrupted for "
                           f"{bad_echo}")
    _summarise(result)
    return result


def _summarise(result: LabResult) -> None:
    short = {"tcp-loopback": "tcp", "shared-memory": "shm"}
    for v in result.variants():
        rows = result.select(v)
        key = short[v]
        if len(rows) >= 2:
            fit = fit_alpha_beta([r["n_bytes"] for r in rows],
                                 [r["one_way_s"] for r in rows])
            result.fits[v] = fit
            result.summary[f"{key}_alpha_s"] = fit.alpha_s
            result.summary[f"{key}_fit_bw_bytes_per_s"] = fit.bw_bytes_per_s
        result.summary[f"{key}_rtt_s"] = rows[0]["median_s"]
        result.summary[f"{key}_rtt_spread_s"] = rows[0]["spread_s"]
        result.summary[f"{key}_bw_bytes_per_s"] = rows[-1]["bw_bytes_per_s"]
    if "tcp_rtt_s" in result.summary and "shm_rtt_s" in result.summary:
        result.summary["latency_ratio"] = (result.summary["tcp_rtt_s"]
                                           / result.summary["shm_rtt_s"])
        result.summary["smallest_n_bytes"] = result.records[0]["n_bytes"]


def explain_kernel_bypass(result: LabResult) -> str:
    """What the learner's own kernel-bypass run shows, in sentences (Markdown),
    read from its numbers: the ratio, how the partners waited, how busy the
    CPUs were, and -- when shared memory lost -- why."""
    from ..units import format_time

    s, m = result.summary, result.metadata
    if "latency_ratio" not in s:
        return "Run both variants (tcp-loopback and shared-memory) to compare them."
    ratio = s["latency_ratio"]
    tcp, shm = format_time(s["tcp_rtt_s"]), format_time(s["shm_rtt_s"])
    size = s.get("smallest_n_bytes", 0)
    load = m.get("load_average_1min")
    cpus = m.get("cpus_available")
    busy = (f"{cpus} CPU{'s' if cpus != 1 else ''} available to this notebook, load "
            f"average {load:.2f}" if load is not None else f"{cpus} CPU(s) available")
    how = {"spin": "spinning, each partner polling on " +
                   ("a CPU of its own" if m.get("pinned_cpus") else "whatever CPU it got"),
           "block": "sleeping between messages (a one-byte pipe write, a system "
                    "call, wakes the partner)"}.get(m.get("wait"), "as configured")
    shown = f"{ratio:.2g}" if ratio < 10 else f"{ratio:.0f}"
    lines = [f"Round trip of {size} B: **TCP {tcp}**, **shared memory {shm}** — "
             f"TCP/shared memory = **{shown}**.  Machine: {busy}"
             f"{' (oversubscribed: fewer than two free CPUs)' if m.get('oversubscribed') else ''}; "
             f"shared-memory partners waited by {how}."]
    if ratio >= 3:
        lines.append("The kernel path costs several times the bypass: system calls, the "
                     "TCP/IP stack, copies into and out of kernel buffers and a wake-up "
                     "of the receiver, on every message.  RDMA removes the same steps "
                     "between machines.")
    elif ratio >= 1:
        if m.get("wait") == "block":
            why = (" — each wake-up is a system call (the part of the kernel path that "
                   "sleeping keeps), and the scheduler must run the partner before it "
                   "can answer.")
        elif m.get("oversubscribed"):
            why = ": the polling partners compete with other work for busy CPUs."
        else:
            why = ": on this machine the kernel path is already short."
        lines.append("Shared memory wins, but not by several times" + why)
    else:
        lines.append("Shared memory *lost*.  Kernel bypass assumes a CPU core that polls "
                     "for the next message without pause (RDMA applications dedicate a "
                     "core to polling their completion queue).  With too few free cores "
                     "a polling partner holds the core that the other one needs to "
                     "answer, and every message waits for the scheduler's time slice "
                     "(milliseconds), while TCP's blocking receive hands its core over "
                     "at once.  The bypass removes the kernel from the data path; it "
                     "cannot remove the need for a CPU to notice the data.  Run it again "
                     "with `wait=\"block\"`, or on a machine with two idle cores.")
    return "\n\n".join(lines)
