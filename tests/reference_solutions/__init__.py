"""Two independent correct solutions per assignment: a loop and a closed form.

Each is ``{solution cell id: source}``; :func:`notebook` puts them into the
released notebook.  Both must get full marks: a hidden test that depends on
how the answer is computed (a float tie at a threshold, one summation order)
fails one of them.  They are written apart from ``solutions/`` on purpose.
"""

from __future__ import annotations

LOOP, CLOSED = "loop", "closed"

RING_ALLREDUCE = {
    LOOP: {
        "part_a": '''
def reduce_scatter_time_s(n_bytes, n_ranks, bw_bytes_per_s, latency_s=0.0):
    t = 0.0
    for _step in range(n_ranks - 1):
        t += latency_s + (n_bytes / n_ranks) / bw_bytes_per_s
    return t


def all_gather_time_s(n_bytes, n_ranks, bw_bytes_per_s, latency_s=0.0):
    t = 0.0
    for _step in range(n_ranks - 1):
        t += latency_s + (n_bytes / n_ranks) / bw_bytes_per_s
    return t
''',
        "part_b": '''
def ring_allreduce_time_s(n_bytes, n_ranks, bw_bytes_per_s, latency_s=0.0):
    return (reduce_scatter_time_s(n_bytes, n_ranks, bw_bytes_per_s, latency_s)
            + all_gather_time_s(n_bytes, n_ranks, bw_bytes_per_s, latency_s))


def bytes_sent_per_rank(n_bytes, n_ranks):
    sent = 0.0
    for _phase in ("reduce-scatter", "all-gather"):
        for _step in range(n_ranks - 1):
            sent += n_bytes / n_ranks
    return sent
''',
        "part_c": '''
grad_bytes = 0
for _ in range(2):
    grad_bytes += 7e9                    # two bytes per FP16 parameter
sent_bytes = bytes_sent_per_rank(grad_bytes, 8)
_h100 = cl.gpu("H100")
t_nvlink_ideal_s = ring_allreduce_time_s(grad_bytes, 8, _h100.nvlink_bw_per_dir_bytes_per_s)
t_nvlink_real_s = ring_allreduce_time_s(grad_bytes, 8, cl.MEASURED["busbw_allreduce_8xH100_ring"].value)
t_pcie_s = ring_allreduce_time_s(grad_bytes, 8, cl.pcie_bw_per_dir_bytes_per_s(5))
''',
        "part_d": '''
def algbw_bytes_per_s(n_bytes, time_s):
    return n_bytes / time_s


def allreduce_busbw_bytes_per_s(n_bytes, time_s, n_ranks):
    moved = 0.0
    for _step in range(2 * (n_ranks - 1)):
        moved += n_bytes / n_ranks
    return moved / time_s
''',
        "part_e": '''
bidir_bw_bytes_per_s = cl.gpu("H100").nvlink_bw_bidir_bytes_per_s
t_seed_method_s = ring_allreduce_time_s(grad_bytes, 8, bidir_bw_bytes_per_s)
trap_factor = t_nvlink_ideal_s / t_seed_method_s
''',
    },
    CLOSED: {
        "part_a": '''
def reduce_scatter_time_s(n_bytes, n_ranks, bw_bytes_per_s, latency_s=0.0):
    return (n_ranks - 1) * latency_s + (n_ranks - 1) / n_ranks * n_bytes / bw_bytes_per_s


all_gather_time_s = reduce_scatter_time_s   # the same traffic, in the other phase
''',
        "part_b": '''
def ring_allreduce_time_s(n_bytes, n_ranks, bw_bytes_per_s, latency_s=0.0):
    return 2 * (n_ranks - 1) * (latency_s + n_bytes / (n_ranks * bw_bytes_per_s))


def bytes_sent_per_rank(n_bytes, n_ranks):
    return 2 * n_bytes * (1 - 1 / n_ranks)
''',
        "part_c": '''
grad_bytes = cl.gradient_bytes(7e9, bytes_per_element=2)
sent_bytes = 2 * 7 / 8 * grad_bytes
t_nvlink_ideal_s = sent_bytes / cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s
t_nvlink_real_s = sent_bytes / cl.MEASURED["busbw_allreduce_8xH100_ring"].value
t_pcie_s = sent_bytes / cl.pcie_bw_per_dir_bytes_per_s(5)
''',
        "part_d": '''
def algbw_bytes_per_s(n_bytes, time_s):
    return n_bytes / time_s


def allreduce_busbw_bytes_per_s(n_bytes, time_s, n_ranks):
    return cl.busbw_bytes_per_s("allreduce", n_bytes, time_s, n_ranks)
''',
        "part_e": '''
bidir_bw_bytes_per_s = cl.gpu("H100").nvlink_bw_bidir_bytes_per_s
t_seed_method_s = sent_bytes / bidir_bw_bytes_per_s
trap_factor = bidir_bw_bytes_per_s / cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s
''',
    },
}

HOP_COUNTS = {
    LOOP: {
        "part_a": '''
def ring_distance(i, j, n):
    best = n
    for direction in (1, -1):
        k, steps = i, 0
        while k != j:
            k = (k + direction) % n
            steps += 1
        best = min(best, steps)
    return best
''',
        "part_b": '''
def ring_average_hops(n):
    total = 0
    for j in range(1, n):
        total += ring_distance(0, j, n)
    return total / (n - 1)
''',
        "part_c": '''
from collections import deque


def bfs_hops(adj, src):
    dist = {src: 0}
    queue = deque([src])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def average_hops_from_adjacency(adj, gpus):
    pairs = 0
    total = 0
    for a in gpus:
        d = bfs_hops(adj, a)
        for b in gpus:
            if b != a:
                total += d[b]
                pairs += 1
    return total / pairs
''',
        "part_d": '''
def _avg(topo, count="links"):
    return cl.average_hops(topo, count=count)


mesh_avg = _avg(cl.fully_connected_topology(8))
cube = cl.hybrid_cube_mesh_topology()
cube_mesh_avg = _avg(cube)
cube_mesh_diameter = cl.diameter(cube)
box = cl.nvswitch_topology(8)
nvswitch_links_avg = _avg(box)
nvswitch_gpu_hops_avg = _avg(box, "gpu-hops")
''',
        "part_e": '''
def two_level_average_hops(nodes, gpus_per_node):
    total, pairs = 0, 0
    for a in range(nodes * gpus_per_node):
        for b in range(nodes * gpus_per_node):
            if a != b:
                total += 2 if a // gpus_per_node == b // gpus_per_node else 4
                pairs += 1
    return total / pairs
''',
        "part_f": '''
import networkx as nx


def ring_slowest_hop_bw(topo, ranks):
    order = list(ranks)
    slowest = float("inf")
    for k, a in enumerate(order):
        b = order[(k + 1) % len(order)]
        widest = 0.0
        for route in nx.all_shortest_paths(topo, a, b):
            narrowest = float("inf")
            for u, v in zip(route, route[1:]):
                narrowest = min(narrowest, topo.edges[u, v]["bw_bytes_per_s"])
            widest = max(widest, narrowest)
        slowest = min(slowest, widest)
    return slowest


packed_bw = ring_slowest_hop_bw(cluster, [0, 1, 2, 3])
spread_bw = ring_slowest_hop_bw(cluster, [0, 4, 1, 5])
paired_bw = ring_slowest_hop_bw(cluster, [0, 1, 4, 5])
placement_ratio = packed_bw / spread_bw
''',
    },
    CLOSED: {
        "part_a": '''
def ring_distance(i, j, n):
    d = (j - i) % n
    return d if 2 * d <= n else n - d
''',
        "part_b": '''
def ring_average_hops(n):
    half = n // 2
    if n % 2:
        return 2 * (half * (half + 1) / 2) / (n - 1)
    return (2 * ((half - 1) * half / 2) + half) / (n - 1)
''',
        "part_c": '''
def bfs_hops(adj, src):
    dist, frontier, level = {src: 0}, {src}, 0
    while frontier:
        level += 1
        frontier = {v for u in frontier for v in adj[u] if v not in dist}
        for v in frontier:
            dist[v] = level
    return dist


def average_hops_from_adjacency(adj, gpus):
    n = len(gpus)
    return sum(sum(bfs_hops(adj, a)[b] for b in gpus) for a in gpus) / (n * (n - 1))
''',
        "part_d": '''
mesh_avg = 1.0
cube = cl.hybrid_cube_mesh_topology()
cube_mesh_avg = cl.average_hops(cube)
cube_mesh_diameter = cl.diameter(cube)
nvswitch_links_avg = 2.0
nvswitch_gpu_hops_avg = 1.0
''',
        "part_e": '''
def two_level_average_hops(nodes, gpus_per_node):
    n = nodes * gpus_per_node
    return 2 + 2 * (n - gpus_per_node) / (n - 1)
''',
        "part_f": '''
def ring_slowest_hop_bw(topo, ranks):
    r = list(ranks)
    return min(map(lambda a, b: cl.path_bottleneck_bw_bytes_per_s(topo, a, b), r, r[-1:] + r[:-1]))


_h100 = cl.gpu("H100")
packed_bw = _h100.nvlink_bw_per_dir_bytes_per_s            # GPU -> NVSwitch -> GPU, every hop
_cross = min(cl.pcie_bw_per_dir_bytes_per_s(_h100.pcie_gen),   # GPU -> NIC
             cl.nic("NDR").bw_per_dir_bytes_per_s)              # NIC -> network switch
spread_bw = paired_bw = _cross                              # a ring is as slow as one crossing
placement_ratio = packed_bw / _cross
''',
    },
}

SCALING_LIMITS = {
    LOOP: {
        "part_a": '''
def seeds_speedup(n, t_comm_s, t_comp_s):
    return n * t_comp_s / (t_comp_s + (n - 1) * t_comm_s)


def amdahl_speedup(parallel_fraction, n):
    return 1 / ((1 - parallel_fraction) + parallel_fraction / n)
''',
        "part_b": '''
def step_time_s(t_comp_s, t_comm_s, overlap):
    total = t_comp_s + t_comm_s
    if not overlap:
        return total
    t_fwd_s = t_comp_s / 3                 # no gradient yet: nothing to send
    t_bwd_s = t_comp_s - t_fwd_s
    if t_comm_s <= t_bwd_s:
        return t_fwd_s + t_bwd_s           # the AllReduce fits inside the backward pass
    return t_fwd_s + t_comm_s              # the backward pass ends first; the rest is exposed
''',
        "part_c": '''
def seeds_efficiency(n, t_comm_s, t_comp_s):
    return seeds_speedup(n, t_comm_s, t_comp_s) / n


def max_gpus(t_comp_s, t_comm_s, threshold, n_max=100_000):
    n = 1
    while n < n_max and seeds_efficiency(n + 1, t_comm_s, t_comp_s) >= threshold:
        n += 1
    return n
''',
        "part_d": '''
t_comm_s = cl.ring_allreduce_time_s(cl.gradient_bytes(7e9, 2), 8,
                                    cl.MEASURED["busbw_allreduce_8xH100_ring"].value)
eff_no_overlap = t_comp_s / step_time_s(t_comp_s, t_comm_s, overlap=False)
eff_overlap = t_comp_s / step_time_s(t_comp_s, t_comm_s, overlap=True)
t_comm_pcie_s = cl.ring_allreduce_time_s(cl.gradient_bytes(7e9, 2), 8, cl.pcie_bw_per_dir_bytes_per_s(5))
eff_overlap_pcie = t_comp_s / step_time_s(t_comp_s, t_comm_pcie_s, overlap=True)
''',
        "part_e": '''
S = cl.gradient_bytes(7e9, 2)
B = cl.MEASURED["busbw_allreduce_8xH100_ring"].value
t1_s = 8 * t_comp_s
t_ring_64 = cl.ring_allreduce_time_s(S, 64, B)
strong_speedup_64 = t1_s / (t1_s / 64 + t_ring_64)
weak_speedup_64 = 64 * t1_s / (t1_s + t_ring_64)
rule_speedup_64 = seeds_speedup(64, 2 * S / B, t1_s)
rule_is = "strong"
''',
    },
    CLOSED: {
        "part_a": '''
def seeds_speedup(n, t_comm_s, t_comp_s):
    return cl.comm_speedup(n, t_comm_s, t_comp_s)


def amdahl_speedup(parallel_fraction, n):
    return n / (n * (1 - parallel_fraction) + parallel_fraction)
''',
        "part_b": '''
def step_time_s(t_comp_s, t_comm_s, overlap):
    hidden = min(cl.traffic.BACKWARD_SHARE * t_comp_s, t_comm_s) if overlap else 0.0
    return t_comp_s + t_comm_s - hidden
''',
        "part_c": '''
import math


def seeds_efficiency(n, t_comm_s, t_comp_s):
    return 1 / (1 + (n - 1) * t_comm_s / t_comp_s)


def max_gpus(t_comp_s, t_comm_s, threshold, n_max=100_000):
    if t_comm_s == 0:
        return n_max
    return max(1, min(n_max, math.floor(1 + (1 - threshold) / threshold * t_comp_s / t_comm_s)))
''',
        "part_d": '''
t_comm_s = 2 * 7 / 8 * cl.gradient_bytes(7e9, 2) / cl.MEASURED["busbw_allreduce_8xH100_ring"].value
eff_no_overlap = t_comp_s / (t_comp_s + t_comm_s)
eff_overlap = t_comp_s / (t_comp_s / 3 + max(2 * t_comp_s / 3, t_comm_s))
t_comm_pcie_s = 2 * 7 / 8 * cl.gradient_bytes(7e9, 2) / cl.pcie_bw_per_dir_bytes_per_s(5)
eff_overlap_pcie = t_comp_s / (t_comp_s / 3 + max(2 * t_comp_s / 3, t_comm_pcie_s))
''',
        "part_e": '''
S = cl.gradient_bytes(7e9, 2)
B = cl.MEASURED["busbw_allreduce_8xH100_ring"].value
t1_s = 8 * t_comp_s
t_ring_64 = 2 * 63 / 64 * S / B
strong_speedup_64 = t1_s / (t1_s / 64 + t_ring_64)
weak_speedup_64 = 64 * t1_s / (t1_s + t_ring_64)
rule_speedup_64 = 64 / (1 + 63 * (2 * S / B) / t1_s)
rule_is = "strong" if abs(rule_speedup_64 - strong_speedup_64) < abs(rule_speedup_64 - weak_speedup_64) else "weak"
''',
    },
}

PINNED_VS_PAGEABLE = {
    LOOP: {
        "part_a": '''
def _arrays(variant):
    sizes, times = [], []
    for r in sorted(res.select(variant), key=lambda r: r["n_bytes"]):
        sizes.append(float(r["n_bytes"]))
        times.append(float(r["median_s"]))
    return np.array(sizes), np.array(times)


sizes_staged_bytes, times_staged_s = _arrays("staged")
sizes_resident_bytes, times_resident_s = _arrays("resident")
''',
        "part_b": '''
def fit_line(n_bytes, times_s):
    # weighted least squares, weight 1/T**2 on each squared residual (relative error)
    x = np.asarray(n_bytes, float)
    y = np.asarray(times_s, float)
    sw = swx = swy = 0.0
    for xi, yi in zip(x, y):
        w = 1.0 / yi ** 2
        sw, swx, swy = sw + w, swx + w * xi, swy + w * yi
    xm, ym = swx / sw, swy / sw
    sxy = sxx = 0.0
    for xi, yi in zip(x, y):
        w = 1.0 / yi ** 2
        sxy += w * (xi - xm) * (yi - ym)
        sxx += w * (xi - xm) ** 2
    slope = sxy / sxx
    return float(ym - slope * xm), float(1.0 / slope)
''',
        "part_c": '''
alpha_staged_s, bw_staged_bytes_per_s = fit_line(sizes_staged_bytes, times_staged_s)
alpha_resident_s, bw_resident_bytes_per_s = fit_line(sizes_resident_bytes, times_resident_s)
''',
        "part_d": '''
t_s, t_r = times_staged_s[-1], times_resident_s[-1]
if t_r < t_s:
    faster, ratio_at_largest = "resident", t_s / t_r
else:
    faster, ratio_at_largest = "staged", t_r / t_s
why = "b"
''',
        "part_e": '''
n_half_resident_bytes = alpha_resident_s * bw_resident_bytes_per_s
''',
        "part_f": '''
rows = [r for r in ref.records if r["variant"] == "h2d-pinned"]
alpha_h200_s, bw_h200_bytes_per_s = fit_line([r["n_bytes"] for r in rows],
                                             [r["median_s"] for r in rows])
_pin = _pag = None
for r in ref.records:
    if r["n_bytes"] == 2**30 and r["variant"] == "h2d-pinned":
        _pin = r["bw_bytes_per_s"]
    if r["n_bytes"] == 2**30 and r["variant"] == "h2d-pageable":
        _pag = r["bw_bytes_per_s"]
pageable_share_at_1GiB = _pag / _pin
''',
    },
    CLOSED: {
        "part_a": '''
_staged = sorted(res.select("staged"), key=lambda r: r["n_bytes"])
_resident = sorted(res.select("resident"), key=lambda r: r["n_bytes"])
sizes_staged_bytes = np.array([r["n_bytes"] for r in _staged], dtype=float)
times_staged_s = np.array([r["median_s"] for r in _staged], dtype=float)
sizes_resident_bytes = np.array([r["n_bytes"] for r in _resident], dtype=float)
times_resident_s = np.array([r["median_s"] for r in _resident], dtype=float)
''',
        "part_b": '''
def fit_line(n_bytes, times_s):
    t = np.asarray(times_s, float)
    A = np.vstack([np.ones(len(n_bytes)), np.asarray(n_bytes, float)]).T / t[:, None]
    (alpha, beta), *_ = np.linalg.lstsq(A, np.ones_like(t), rcond=None)   # rows divided by T
    return float(alpha), float(1.0 / beta)
''',
        "part_c": '''
alpha_staged_s, bw_staged_bytes_per_s = fit_line(sizes_staged_bytes, times_staged_s)
alpha_resident_s, bw_resident_bytes_per_s = fit_line(sizes_resident_bytes, times_resident_s)
''',
        "part_d": '''
_t = {"staged": times_staged_s[-1], "resident": times_resident_s[-1]}
faster = min(_t, key=_t.get)
ratio_at_largest = max(_t.values()) / min(_t.values())
why = "B"
''',
        "part_e": '''
n_half_resident_bytes = alpha_resident_s * bw_resident_bytes_per_s
''',
        "part_f": '''
rows = ref.select("h2d-pinned")
alpha_h200_s, bw_h200_bytes_per_s = fit_line([r["n_bytes"] for r in rows],
                                             [r["median_s"] for r in rows])
_bw = {r["variant"]: r["bw_bytes_per_s"] for r in ref.records if r["n_bytes"] == 2**30}
pageable_share_at_1GiB = _bw["h2d-pageable"] / _bw["h2d-pinned"]
''',
    },
}

REFERENCES = {"ring_allreduce": RING_ALLREDUCE, "hop_counts": HOP_COUNTS,
              "scaling_limits": SCALING_LIMITS, "pinned_vs_pageable": PINNED_VS_PAGEABLE}


def notebook(released_nb, assignment: str, variant: str):
    """The released notebook with the ``variant`` reference solution in its answer cells
    (the cells' own statements around the answer -- a print, a given constant -- stay)."""
    import ast
    import copy
    nb = copy.deepcopy(released_nb)
    parts = REFERENCES[assignment][variant]
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution") or meta.get("grade_id") not in parts:
            continue
        src = cell.source
        head, tail, seen = [], [], False
        for node in ast.parse(src).body:
            if isinstance(node, (ast.FunctionDef, ast.Raise)):
                seen = True
                continue
            (tail if seen else head).append(ast.get_source_segment(src, node))
        cell.source = "\n".join(head + [parts[meta["grade_id"]].strip()] + tail)
    return nb
