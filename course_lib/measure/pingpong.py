"""Lab (chapter 5): the kernel path vs shared memory -- why RDMA bypasses the kernel.

Two processes on this machine play ping-pong: one sends ``n`` bytes, the
other sends them back, and the round trip is timed.

``tcp-loopback``
    over a TCP socket on 127.0.0.1 (``TCP_NODELAY``).  Every message goes
    through the kernel: a system call to send, a copy into kernel buffers, the
    TCP/IP stack, a wake-up of the receiver, a system call and a copy out --
    the path a network message takes without RDMA.
``shared-memory``
    through a ``multiprocessing.shared_memory`` segment: the sender copies the
    payload into the segment and bumps a sequence number; the receiver spins on
    that number, copies the payload back and bumps its own.  No system call and
    no kernel on the data path -- the idea behind RDMA's kernel bypass (the
    NIC writes straight into the application's registered memory).

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
           "PINGPONG_VARIANTS", "PINGPONG_FULL_SIZES", "PINGPONG_QUICK_SIZES"]

PINGPONG_VARIANTS = ("tcp-loopback", "shared-memory")
#: 8 B .. 2 MiB, every factor of 8.
PINGPONG_FULL_SIZES = tuple(8**k for k in range(1, 8))
#: 8 B, 4 KiB, 64 KiB.
PINGPONG_QUICK_SIZES = (8, 4096, 65536)

_HDR = 128                      # control block: two cache lines of int64
_REQ_SEQ, _REQ_LEN, _RESP_SEQ = 0, 1, 8
_SPIN_CHECK = 1024             # spins between deadline checks
_YIELD_EVERY = 4               # spins between yields of the CPU (for busy machines)


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


def _tcp_echo_server(pipe, max_bytes: int, timeout_s: float) -> None:
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


def _shm_echo_server(shm, max_bytes: int, timeout_s: float) -> None:
    ctrl = shm.buf[:_HDR].cast("q")
    a = np.frombuffer(shm.buf, np.uint8, count=max_bytes, offset=_HDR)
    b = np.frombuffer(shm.buf, np.uint8, count=max_bytes, offset=_HDR + max_bytes)
    try:
        last = 0                # the parent zeroed the block before starting us
        while True:
            last = _spin_until_changed(ctrl, _REQ_SEQ, last, timeout_s)
            n = ctrl[_REQ_LEN]
            if n < 0:
                ctrl[_RESP_SEQ] = last
                break
            np.copyto(b[:n], a[:n])
            ctrl[_RESP_SEQ] = last
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
                 start_method: str | None = None):
        self.max_bytes = check_int(max_bytes, "max_bytes", minimum=1)
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
                                     args=(child, self.max_bytes, self.timeout_s),
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
        self.proc = self.ctx.Process(target=_shm_echo_server,
                                     args=(self.shm, self.max_bytes, self.timeout_s),
                                     daemon=True)
        self.proc.start()

    def rtt(self, n_bytes: int) -> None:
        ctrl = self.ctrl
        np.copyto(self.a[:n_bytes], self.payload[:n_bytes])
        self.seq += 1
        ctrl[_REQ_LEN] = n_bytes
        ctrl[_REQ_SEQ] = self.seq
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
                try:
                    _spin_until(self.ctrl, _RESP_SEQ, self.seq, 2.0)
                except TimeoutError:
                    pass
        finally:
            self._join()
            self.a = self.b = None
            self.ctrl.release()
            shm.close()
            try:
                shm.unlink()
            except FileNotFoundError:
                pass
            self.shm = None


_CLASSES = {"tcp-loopback": TcpPingPong, "shared-memory": ShmPingPong}


def kernel_bypass_lab(sizes_bytes=None, *, quick: bool = False,
                      variants=PINGPONG_VARIANTS, repeats: int | None = None,
                      number: int | None = None, warmup: int = 1,
                      budget_s: float | None = None, timeout_s: float = 10.0,
                      progress: bool = True, start_method: str | None = None
                      ) -> LabResult:
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

    Returns
    -------
    LabResult
        Summary: ``tcp_rtt_s`` and ``shm_rtt_s`` (round trip at the smallest
        size), ``latency_ratio`` (TCP over shared memory), one-way
        bandwidths at the largest size, and the fitted one-way alpha and B of
        each path.

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
    lab = "kernel-bypass"
    result = LabResult(name=lab, metadata=machine_info(), plot_y="one_way_s")
    result.metadata.update({"quick": quick, "repeats": repeats, "budget_s": budget_s,
                            "median_s": "round trip", "transport_host": "127.0.0.1"})
    bad_echo = []
    bar = progress_bar(range(len(sizes) * len(variants)),
                       total=len(sizes) * len(variants), desc="kernel-bypass",
                       disable=not progress)
    it = iter(bar)
    for variant in variants:
        with _CLASSES[variant](max(sizes), timeout_s, start_method) as pp:
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
