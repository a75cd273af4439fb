"""A training step as a timeline: phases, gradient buckets and the chunks of each AllReduce.

Not uniform bars: the forward pass, then the backward pass cut into the
gradient buckets it produces (one colour per bucket), and under it each
bucket's AllReduce in the same colour, split into its two phases
(ReduceScatter | AllGather for a ring, reduce | broadcast for a tree, up |
down for NVLS) with a tick for every step of the ring -- each tick one chunk
of ``S / (n K)`` bytes per GPU.  Communication the backward pass does not
hide is marked "exposed".

The times come from :func:`course_lib.traffic.bucket_overlap_schedule`
(which :func:`training_step` feeds with
:func:`course_lib.predict.predict_collective`'s AllReduce time of one bucket),
so the drawing is the model's schedule, not an illustration of it.

>>> from course_lib import traffic
>>> s = traffic.bucket_overlap_schedule(1.0, 1.0, n_buckets=4)
>>> d = bucket_timeline([("overlap", s)], n_ranks=4)
>>> d.svg.count('class="ic-bucket"'), d.svg.count('class="ic-comm"')
(4, 4)
"""

from __future__ import annotations

from ..units import check_int, format_bytes, format_time
from .style import CHUNK_COLOURS
from .svg import Canvas, Diagram

__all__ = ["bucket_timeline", "training_step", "phase_names", "barrier_timeline"]

_FORWARD = "#b9b3d9"
_INK = "#222"
_MUTED = "#666"
_EXPOSED = "#c0392b"


def phase_names(algorithm: str) -> tuple[str, str]:
    """The two halves of an AllReduce by algorithm.

    >>> phase_names("ring")
    ('ReduceScatter', 'AllGather')
    """
    names = {"ring": ("ReduceScatter", "AllGather"), "tree": ("reduce up", "broadcast down"),
             "nvls": ("up to the switch", "down from the switch"),
             "hierarchical": ("ReduceScatter + rails", "AllGather")}
    if algorithm not in names:
        raise ValueError(f"algorithm must be one of {sorted(names)}, got {algorithm!r}")
    return names[algorithm]


def _check_schedule(s, name="schedules"):
    if not isinstance(s, dict) or not {"compute", "comm", "iteration_s",
                                       "n_buckets"} <= set(s):
        raise TypeError(f"{name} must hold schedules from "
                        "traffic.bucket_overlap_schedule (dicts with compute, comm, "
                        f"iteration_s, n_buckets), got {type(s).__name__}")
    return s


def _ticks(t_max: float, n: int = 5):
    """About ``n`` round tick values in [0, t_max]."""
    import math

    if t_max <= 0:
        return [0.0]
    raw = t_max / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return [i * step for i in range(int(t_max / step) + 1)]


def bucket_timeline(schedules, n_ranks: int = 8, algorithm: str = "ring",
                    title: str = "", width: float = 860) -> Diagram:
    """Draw one or more training steps (stacked, on one time axis).

    Parameters
    ----------
    schedules : list of (label, schedule)
        Each ``schedule`` a dict from :func:`course_lib.traffic.bucket_overlap_schedule`.
    n_ranks : int
        GPUs in the AllReduce: a ring has 2(n-1) steps per bucket (the ticks).
    algorithm : str
        ``"ring"``, ``"tree"``, ``"nvls"`` or ``"hierarchical"`` (names the phases).
    title : str
        A line above the timelines.
    width : float
        Pixels, at most 900 for a notebook.

    Returns
    -------
    Diagram
    """
    if isinstance(schedules, dict):
        schedules = [("", schedules)]
    schedules = [(str(label), _check_schedule(s)) for label, s in schedules]
    if not schedules:
        raise ValueError("schedules must hold at least one (label, schedule)")
    n = check_int(n_ranks, "n_ranks", minimum=1, maximum=100_000)
    first, second = phase_names(algorithm)
    if not 300 <= width <= 900:
        raise ValueError(f"width must lie in [300, 900] pixels, got {width!r}")
    t_max = max(max(s["iteration_s"], max((e for _, e in s["comm"]), default=0.0))
                for _, s in schedules) or 1.0
    left, right = 118, 24
    scale = (width - left - right) / t_max
    lane_h, lane_gap = 22, 6
    has_forward = any(len(s["compute"]) > s["n_buckets"] for _, s in schedules)
    lanes = (["forward"] if has_forward else []) + ["backward", "comm"]
    block_h = 20 + len(lanes) * (lane_h + lane_gap) + 14
    top = 36 if title else 12
    height = top + block_h * len(schedules) + 66
    c = Canvas(width, height, title=title or "Training step timeline")
    if title:
        c.text(10, 16, title, size=13, anchor="start", weight="bold")
    steps = 2 * (n - 1) if algorithm == "ring" and n > 1 else 0
    ticked = False
    for b, (label, s) in enumerate(schedules):
        y0 = top + b * block_h
        k = s["n_buckets"]
        compute = list(s["compute"])
        forward = compute[0] if len(compute) > k else None
        backward = compute[-k:]
        c.text(10, y0 + 8, label or "one training step", size=12, anchor="start",
               weight="bold")
        # with no forward lane the time is backward + AllReduce, not the whole step
        what = "step" if forward is not None else "backward + AllReduce"
        c.text(width - right, y0 + 8, f"{what} = {format_time(s['iteration_s'])}", size=12,
               anchor="end", weight="bold")
        ys = {lane: y0 + 18 + i * (lane_h + lane_gap) for i, lane in enumerate(lanes)}
        names = {"forward": "forward", "backward": "backward", "comm": "AllReduce"}
        for lane in lanes:
            text = names[lane]
            c.text(left - 8, ys[lane] + lane_h / 2, text, size=11, anchor="end",
                   fill=_MUTED)
            c.line(left, ys[lane] + lane_h, width - right, ys[lane] + lane_h,
                   stroke="#ddd", width=1)
        if forward is not None and forward[1] > forward[0]:
            with c.group(cls="ic-phase", data_phase="forward"):
                c.rect(left + forward[0] * scale, ys["forward"],
                       (forward[1] - forward[0]) * scale, lane_h, fill=_FORWARD,
                       stroke="white", width=0.8, rx=2,
                       title=f"forward pass: {format_time(forward[1] - forward[0])}")
        for i, ((a, e), (ca, ce)) in enumerate(zip(backward, s["comm"])):
            col = CHUNK_COLOURS[i % len(CHUNK_COLOURS)]
            x, w = left + a * scale, max((e - a) * scale, 0.5)
            with c.group(cls="ic-bucket", data_bucket=i):
                c.rect(x, ys["backward"], w, lane_h, fill=col, stroke="white", width=0.8,
                       rx=2, title=f"backward produces bucket {i}: "
                       f"{format_time(a)} to {format_time(e)}")
                if w >= 22:
                    c.text(x + w / 2, ys["backward"] + lane_h / 2 + 1, f"b{i}", size=11,
                           fill="white", weight="bold")
            x, w = left + ca * scale, max((ce - ca) * scale, 0.5)
            with c.group(cls="ic-comm", data_bucket=i):
                c.rect(x, ys["comm"], w / 2, lane_h, fill=col, stroke="none", width=0,
                       rx=1, title=f"bucket {i}: {first}")
                c.rect(x + w / 2, ys["comm"], w / 2, lane_h, fill=col, stroke="none",
                       width=0, rx=1, opacity=0.5, title=f"bucket {i}: {second}")
                if steps and w / steps >= 4:          # one tick per ring step (chunk)
                    ticked = True
                    for j in range(1, steps):
                        xx = x + j * w / steps
                        c.line(xx, ys["comm"] + 3, xx, ys["comm"] + lane_h - 3,
                               stroke="white", width=1, cls="ic-chunk-tick")
                c.rect(x, ys["comm"], w, lane_h, fill="none", stroke="white", width=0.8,
                       rx=1)
        end_bwd = backward[-1][1] if backward else 0.0
        exposed = s["iteration_s"] - end_bwd
        if exposed > 1e-12 * max(t_max, 1e-30):
            x0, x1 = left + end_bwd * scale, left + s["iteration_s"] * scale
            yb = ys["comm"] + lane_h + 6
            with c.group(cls="ic-exposed"):
                c.line(x0, yb, x1, yb, stroke=_EXPOSED, width=2)
                c.line(x0, yb - 4, x0, yb + 4, stroke=_EXPOSED, width=2)
                c.line(x1, yb - 4, x1, yb + 4, stroke=_EXPOSED, width=2)
                c.text((x0 + x1) / 2, yb + 10 if x1 - x0 > 120 else yb + 10,
                       f"exposed {format_time(exposed)}", size=11, fill=_EXPOSED,
                       anchor="middle" if x1 - x0 > 120 else "end")
        c.line(left + s["iteration_s"] * scale, ys[lanes[0]] - 4,
               left + s["iteration_s"] * scale, ys["comm"] + lane_h + 2, stroke=_INK,
               width=1.5, dash="4,3")
    # time axis
    ya = top + block_h * len(schedules) + 2
    c.line(left, ya, width - right, ya, stroke="#999", width=1)
    for t in _ticks(t_max):
        x = left + t * scale
        c.line(x, ya, x, ya + 4, stroke="#999", width=1)
        c.text(x, ya + 14, format_time(t, digits=2) if t else "0", size=11, fill=_MUTED)
    # key
    yk = ya + 36
    c.rect(10, yk - 7, 22, 14, fill=CHUNK_COLOURS[0], stroke="none", rx=2)
    c.rect(32, yk - 7, 22, 14, fill=CHUNK_COLOURS[0], stroke="none", rx=2, opacity=0.5)
    tick = (f"; a white tick = one ring step, a chunk of S/({n}K) per GPU" if ticked
            else f"; {steps} ring steps each (too short to draw)" if steps else "")
    c.text(60, yk, f"one bucket's AllReduce: {first} (solid) then {second} (light){tick}",
           size=11, anchor="start", fill=_MUTED)
    c.text(10, yk + 20, "Colours = gradient buckets: bucket k is reduced once the "
           "backward pass has produced it.", size=11, anchor="start", fill=_MUTED)
    return c.diagram()


def training_step(cluster, n_params: float, t_backward_s: float, n_buckets: int = 4,
                  t_forward_s: float = 0.0, bytes_per_element: int = 2,
                  both: bool = True) -> Diagram:
    """A data-parallel training step on ``cluster``, without and with overlap.

    Each bucket's AllReduce time is :func:`course_lib.predict.predict_collective`
    for ``gradients / n_buckets`` bytes on the cluster; the schedule is
    :func:`course_lib.traffic.bucket_overlap_schedule`.

    Parameters
    ----------
    cluster : Cluster
        From :func:`course_lib.cluster`.
    n_params : float
        Parameters of the model (gradients = n_params x bytes_per_element).
    t_backward_s, t_forward_s : float
        The passes' compute time, seconds.
    n_buckets : int
        Gradient buckets.
    both : bool
        True: the step without overlap above the step with overlap.

    >>> import course_lib as cl
    >>> d = training_step(cl.cluster("H100"), 7e9, 0.5, n_buckets=4)
    >>> d.svg.count('class="ic-comm"')
    8
    """
    from .. import predict, traffic
    from ..analytic import gradient_bytes

    k = check_int(n_buckets, "n_buckets", minimum=1, maximum=1024)
    if not isinstance(both, bool):
        raise TypeError(f"both must be True or False, got {both!r}")
    grad = gradient_bytes(n_params, bytes_per_element)
    p = predict.predict_collective("allreduce", grad / k, cluster)
    rows = []
    for overlap in ((False, True) if both else (True,)):
        s = traffic.bucket_overlap_schedule(t_backward_s, k * p.time_s, k,
                                            overlap=overlap, t_forward_s=t_forward_s)
        rows.append(("overlap: each bucket reduced when ready" if overlap else
                     "no overlap: all buckets reduced after backward", s))
    return bucket_timeline(rows, n_ranks=cluster.n_ranks, algorithm=p.algorithm,
                           title=f"{format_bytes(grad)} of gradients in {k} buckets on "
                           f"{cluster.describe()} ({p.algorithm})")


def barrier_timeline(phase_times_s, title: str = "", width: float = 860) -> Diagram:
    """GPUs that meet at barriers: a barrier after every phase above one at the end.

    Each row is a GPU, each segment a phase (its work); hatched grey is time
    spent waiting for the slowest GPU.  The two step times are
    :func:`course_lib.traffic.barrier_step_time_s` with ``every_phase`` True
    and False.

    Parameters
    ----------
    phase_times_s : array_like, shape (n_gpus, n_phases)
        Seconds each GPU spends in each phase (e.g.
        :func:`course_lib.traffic.straggler_phase_times_s`).

    >>> d = barrier_timeline([[1.0, 3.0], [3.0, 1.0]])
    >>> d.svg.count('class="ic-wait"'), "step = 6 s" in d.svg, "step = 4 s" in d.svg
    (2, True, True)
    """
    import numpy as np

    from .. import traffic

    try:
        t = np.asarray(phase_times_s, dtype=float)
    except (ValueError, TypeError):
        raise ValueError("phase_times_s must be a (n_gpus, n_phases) array of "
                         "non-negative seconds") from None
    if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 1 or not np.all(np.isfinite(t)) \
            or np.any(t < 0):
        raise ValueError("phase_times_s must be a (n_gpus, n_phases) array of "
                         f"non-negative seconds, got shape {t.shape}")
    if not 300 <= width <= 900:
        raise ValueError(f"width must lie in [300, 900] pixels, got {width!r}")
    g, p = t.shape
    every = traffic.barrier_step_time_s(t, every_phase=True)
    once = traffic.barrier_step_time_s(t, every_phase=False)
    left, right = 70, 24
    scale = (width - left - right) / max(every, once, 1e-30)
    row = max(8, min(18, 150 // g))
    block = 22 + g * row + 16
    top = 32 if title else 8
    height = top + 2 * block + 70
    c = Canvas(width, height, title=title or "Barriers wait for the slowest GPU")
    if title:
        c.text(10, 16, title, size=13, anchor="start", weight="bold")
    ends = np.cumsum(t.max(axis=0))             # with a barrier after every phase
    starts = np.concatenate([[0.0], ends[:-1]])
    for b, (label, step) in enumerate(((f"a barrier after each of {p} phases", every),
                                       ("one barrier at the end", once))):
        y0 = top + b * block
        c.text(10, y0 + 8, label, size=12, anchor="start", weight="bold")
        c.text(width - right, y0 + 8, f"step = {format_time(step)}", size=12,
               anchor="end", weight="bold")
        for i in range(g):
            y = y0 + 20 + i * row
            if i == 0 or g <= 12 or i == g - 1:
                c.text(left - 6, y + row / 2, f"GPU {i}", size=11, anchor="end",
                       fill=_MUTED)
            clock = 0.0
            for j in range(p):
                s0 = starts[j] if b == 0 else clock
                col = CHUNK_COLOURS[j % len(CHUNK_COLOURS)]
                c.rect(left + s0 * scale, y, t[i, j] * scale, row - 2, fill=col,
                       stroke="none", width=0, rx=0, cls="ic-phase",
                       data_gpu=i, data_phase=j)
                clock = s0 + t[i, j]
                wait_to = ends[j] if b == 0 else (once if j == p - 1 else clock)
                if wait_to - clock > 1e-12 * step:
                    c.rect(left + clock * scale, y, (wait_to - clock) * scale, row - 2,
                           fill="#e6e6e6", stroke="#bbb", width=0.5, rx=0, cls="ic-wait",
                           title=f"GPU {i} waits {format_time(wait_to - clock)}")
        xb = left + step * scale
        c.line(xb, y0 + 16, xb, y0 + 20 + g * row, stroke=_INK, width=1.5, dash="4,3")
        if b == 0:
            for e in ends[:-1]:
                c.line(left + e * scale, y0 + 18, left + e * scale, y0 + 20 + g * row,
                       stroke=_EXPOSED, width=1, opacity=0.6)
    ya = top + 2 * block + 4
    c.line(left, ya, width - right, ya, stroke="#999", width=1)
    for tk in _ticks(max(every, once)):
        x = left + tk * scale
        c.line(x, ya, x, ya + 4, stroke="#999", width=1)
        c.text(x, ya + 14, format_time(tk, digits=2) if tk else "0", size=11, fill=_MUTED)
    c.text(10, ya + 36, "Colours = phases of work; grey = waiting for the slowest GPU; "
           "red lines = barriers.", size=11, anchor="start", fill=_MUTED)
    return c.diagram()
