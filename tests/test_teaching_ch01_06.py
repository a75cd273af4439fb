"""Numbers that chapters 0-6 teach, checked against the catalog and against
measurements (issue 11): coherent start-up costs, the measured PCIe rate,
NVLink's half-bandwidth size, the seeds' aggregate and unit claims, and the
chapter 6 topology fixes.  Each test fails on the behaviour it replaced.
"""

import itertools
import json
import re
from pathlib import Path

import pytest

import course_lib as cl
from course_lib import content, explorers, topology

ROOT = Path(__file__).resolve().parents[1]
US = 1e-6

# Course measurement on an NVIDIA H200, PCIe Gen5 x16 (gpu-copies lab):
# median time per copy, pinned host-to-device, copies queued back to back.
H200_PINNED_H2D = {1024: 2.746 * US, 65536: 3.919 * US, 262144: 7.380 * US,
                   1048576: 21.553 * US, 16777216: 305.49 * US,
                   1073741824: 19397.2 * US}
H200_SYNC_SMALL_H2D = 7.30 * US          # 8 B, one synchronous copy, host clock


def lat(name):
    return cl.LATENCIES[name].value


# --- one alpha per route, of one kind -------------------------------------------
def test_nvlink_neighbour_starts_sooner_than_a_gpu_in_another_server():
    assert lat("nvlink_p2p") < lat("gpudirect_rdma_one_way")
    for nic in cl.nic_names():
        for d in (0.0, 2.0, 100.0):
            nv = cl.route_parameters("p2p-nvlink", gpu="H100")["latency_s"]
            rd = cl.route_parameters("rdma", gpu="H100", nic=nic, distance_m=d)["latency_s"]
            assert nv < rd


def test_routes_take_their_alpha_from_the_catalog():
    assert cl.route_parameters("h2d")["latency_s"] == lat("pcie_small_copy")
    assert cl.route_parameters("d2h")["latency_s"] == lat("pcie_small_copy")
    assert cl.route_parameters("p2p-staged")["latency_s"] == lat("pcie_staged_p2p")
    assert cl.route_parameters("p2p-nvlink")["latency_s"] == lat("nvlink_p2p")
    assert cl.route_parameters("p2p-pcie")["latency_s"] == lat("pcie_p2p")
    p = cl.route_parameters("rdma", distance_m=10.0)
    # one way: the fibre counts once (issue 20: it used to add the round trip)
    assert p["latency_s"] == pytest.approx(lat("gpudirect_rdma_one_way") + cl.fibre_one_way_s(10.0))
    assert p["latency_s"] < lat("gpudirect_rdma_one_way") + cl.fibre_rtt_s(10.0)


def test_end_to_end_copy_is_at_least_its_parts():
    sync, gpu_side, api = lat("pcie_small_copy_sync"), lat("pcie_small_copy"), lat("cuda_api_call")
    assert sync >= api and sync >= gpu_side
    assert sync == pytest.approx(gpu_side + api)
    # the measurement it comes from, and the seeds' 5-10 us bracket it
    assert sync == pytest.approx(H200_SYNC_SMALL_H2D, rel=0.02)
    assert 5 * US <= sync <= 10 * US


def test_small_copy_alpha_and_measured_rate_fit_the_h200_curve():
    bw = cl.host_copy_bw_bytes_per_s(5, "pinned", measured=True)
    for size, measured in H200_PINNED_H2D.items():
        model = cl.transfer_time_s(size, bw, lat("pcie_small_copy"))
        assert model == pytest.approx(measured, rel=0.06), size
    # the spec rate misses the large copies by the DMA efficiency
    spec = cl.host_copy_bw_bytes_per_s(5, "pinned")
    assert spec / bw == pytest.approx(1 / 0.87, rel=1e-9)
    assert abs(cl.transfer_time_s(2**30, spec) / H200_PINNED_H2D[2**30] - 1) > 0.1


def test_myth_one_small_messages_rank_neighbour_before_other_server():
    ev = content.myth("nvlink_everywhere").evidence()
    small = ev["small_4kB_s"]
    assert small["p2p-nvlink"] < small["rdma"]


def test_myth_dma_cpu_time_uses_the_derived_api_cost():
    ev = content.myth("dma_cpu_idle").evidence()
    assert ev["cpu_issue_s"] == pytest.approx(10_000 * lat("cuda_api_call"))
    # the job itself: each copy waited for, at the measured end-to-end start-up
    bw = cl.host_copy_bw_bytes_per_s(5, measured=True)
    assert ev["one_by_one_s"] == pytest.approx(10_000 * (lat("pcie_small_copy_sync") + 4096 / bw))
    assert ev["one_by_one_s"] > ev["cpu_issue_s"]


def test_batching_explorer_defaults_to_the_measured_end_to_end_alpha():
    d = explorers.ch04_batching.explorer().update()
    assert d["latency_s"] == lat("pcie_small_copy_sync")
    assert d["bw_bytes_per_s"] == pytest.approx(cl.host_copy_bw_bytes_per_s(5, measured=True))


def test_chapter4_quiz_uses_the_measured_alpha():
    q = content.chapter_quiz(4)[1]
    assert cl.format_time(lat("pcie_small_copy_sync")) in q.prompt


# --- what the seeds claim, computed -----------------------------------------------
def test_nvlink_half_bandwidth_size_h100():
    h100 = cl.gpu("H100")
    n_half = cl.half_bandwidth_bytes(lat("nvlink_p2p"), h100.nvlink_bw_per_dir_bytes_per_s)
    assert n_half == pytest.approx(0.9e6)          # 2 us x 450 GB/s


def test_four_h100_aggregate_is_a_bidirectional_sum():
    h100 = cl.gpu("H100")
    assert 4 * h100.nvlink_bw_bidir_bytes_per_s == pytest.approx(3.6e12)
    assert 4 * h100.nvlink_bw_per_dir_bytes_per_s == pytest.approx(1.8e12)


def test_reading_100_gbit_as_gbyte_is_eight_times_off():
    edr = cl.nic("EDR")
    assert edr.bw_per_dir_bytes_per_s == pytest.approx(12.5e9)
    assert 100e9 / edr.bw_per_dir_bytes_per_s == pytest.approx(8.0)


# --- quizzes: PCIe peer-to-peer is not "through host memory" by necessity -----------
def test_ch2_quiz_does_not_claim_only_nvlink_avoids_host_memory():
    q = content.chapter_quiz(2)[2]
    for k in q.answer:
        assert "host memory" not in q.options[k]
    wrong = [k for k, o in enumerate(q.options) if "host memory" in o]
    assert wrong and all("switch" in q.why_wrong[k] for k in wrong)


# --- chapter 6 ------------------------------------------------------------------
def _exhaustive_bisection(topo):
    ranks = cl.gpus(topo)
    edges = [(u, v, d["bw_bytes_per_s"]) for u, v, d in topo.edges(data=True)]
    best = float("inf")
    for rest in itertools.combinations(ranks[1:], len(ranks) // 2 - 1):
        left = [ranks[0], *rest]
        right = [r for r in ranks if r not in left]
        best = min(best, topology._min_cut(edges, left, right))
    return best


@pytest.mark.parametrize("nodes,per_node", [(3, 2), (3, 4), (5, 2), (5, 3), (2, 4)])
def test_two_level_bisection_with_odd_node_counts_is_exact(nodes, per_node):
    t = cl.two_level_topology(nodes, per_node)
    fast = topology._two_level_bisection(t)
    assert fast == pytest.approx(_exhaustive_bisection(t))
    if nodes % 2:       # the old closed form, nodes//2 x NICs x rate, was too small
        port = cl.nic("NDR").bw_per_dir_bytes_per_s
        assert fast > (nodes // 2) * per_node * port


def test_topology_explorer_bisection_for_three_nodes():
    d = explorers.ch06_topology.explorer().update(kind="two-level", n_gpus=6)
    assert d["bisection_bytes_per_s"] == pytest.approx(
        _exhaustive_bisection(cl.two_level_topology(3, 2)))


def test_gpu_hops_between_servers_count_nic_switch_nic():
    t = cl.two_level_topology(2, 4)
    assert cl.hops(t, 0, 1, count="gpu-hops") == 1
    assert cl.hops(t, 0, 4, count="gpu-hops") == 3
    d = explorers.ch06_topology.explorer().update(kind="two-level", n_gpus=8,
                                                   count="gpu-hops")
    assert list(d["hops_from_source"]) == [0, 1, 1, 1, 3, 3, 3, 3]


# --- the notebooks of chapters 0-6 --------------------------------------------------
def _notebook_text(name):
    nb = json.loads((ROOT / "notebooks" / name).read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"])


NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("0[0-6]_*.ipynb"))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_chapter_has_folded_answers_and_no_private_paths(name):
    text = _notebook_text(name)
    assert "../shared" not in text
    if name.startswith("00_"):
        assert "catalog_table()" not in text        # the 90-row dump is behind a link
        return
    exercises = text[text.index("## Exercises"):]
    assert "<details>" in exercises and "</details>" in exercises


def test_no_notebook_claims_every_eight_gpu_server_uses_nvswitch():
    text = _notebook_text("06_road_map.ipynb")
    assert not re.search(r"every modern 8-GPU server", text)
    assert "MI300X" in text


def test_pageable_ratio_brackets_the_h200_measurements():
    pinned = cl.MEASURED["h2d_pinned_pcie5"].value
    r_small = cl.MEASURED["h2d_pageable_h200_1MiB"].value / pinned
    r_large = cl.MEASURED["h2d_pageable_h200_1GiB"].value / pinned
    assert r_large < r_small
    assert r_large <= cl.MEASURED["pageable_over_pinned_x86"].value <= 0.5


def test_latency_and_measured_facts_name_public_or_course_sources():
    for table in (cl.LATENCIES, cl.MEASURED):
        for name, fact in table.items():
            assert "../shared" not in fact.source and "FACTS.md" not in fact.source, name
            assert fact.note, name          # each says what it measures


# --- issue 20: one latency bookkeeping, PCIe peer-to-peer, pageable by size ---------
H200_H2D_RATIO = {1024: 0.486 / 0.373, 65536: 10.023 / 16.724,
                  1048576: 17.062 / 48.652, 1073741824: 6.706 / 55.356}


def test_rdma_alpha_is_one_way_and_completion_is_a_separate_round_trip():
    p = cl.route_parameters("rdma", nic="NDR", distance_m=100e3)
    one_way = lat("gpudirect_rdma_one_way") + 100e3 / (0.7 * 299_792_458)
    assert p["latency_s"] == pytest.approx(one_way)                 # about 480 us
    assert 470e-6 < p["latency_s"] < 490e-6                          # not 957 us
    assert p["completion_rtt_s"] == pytest.approx(2 * one_way)
    assert 950e-6 < p["completion_rtt_s"] < 970e-6
    # the seeds' round trip is the completion, not the arrival
    ndr = cl.nic("NDR").bw_per_dir_bytes_per_s
    arrive = cl.rdma_transfer_time_s(0, ndr, 1000)
    done = cl.rdma_transfer_time_s(0, ndr, 1000, completion=True)
    assert arrive == pytest.approx(cl.fibre_one_way_s(1000))
    assert done == pytest.approx(cl.fibre_rtt_s(1000))
    with pytest.raises(TypeError, match="completion"):
        cl.rdma_transfer_time_s(0, ndr, 1000, completion="yes")


def test_staged_route_is_store_and_forward_by_default_and_pipelining_halves_it():
    grad = cl.gradient_bytes(7e9)
    naive = cl.route_transfer_time_s(grad, "p2p-staged", gpu="H100")
    piped = cl.route_transfer_time_s(grad, "p2p-staged", gpu="H100", chunk_bytes=4 * cl.MB)
    assert naive == pytest.approx(0.444, abs=0.001)
    assert piped == pytest.approx(0.222, abs=0.001)
    assert cl.effective_utilisation(0.8, naive) == pytest.approx(0.64, abs=0.005)
    assert cl.effective_utilisation(0.8, piped) == pytest.approx(0.78, abs=0.005)
    text = _notebook_text("01_city_at_night.ipynb")
    assert "store and forward" in text and "pipelin" in text


def test_pcie_peer_to_peer_is_a_route_one_leg_over_pcie():
    assert "p2p-pcie" in cl.ROUTES
    p = cl.route_parameters("p2p-pcie", gpu="A100")
    assert p["legs"] == 1
    assert p["bw_bytes_per_s"] == cl.pcie_bw_per_dir_bytes_per_s(4)
    staged = cl.route_parameters("p2p-staged", gpu="A100")
    for size in (1e3, 1e6, 1e9):
        assert (cl.route_transfer_time_s(size, "p2p-pcie", gpu="A100")
                < cl.route_transfer_time_s(size, "p2p-staged", gpu="A100"))
    # one NVLink 3 link (25 GB/s) against PCIe Gen4 peer-to-peer (31.5 GB/s): a crossover
    one_link = cl.route_parameters("p2p-nvlink", gpu="A100", nvlink_links=1)
    assert 0 < cl.route_crossover_bytes(one_link, p) < float("inf")
    assert cl.route_crossover_bytes(one_link, staged) == float("inf")


def test_chapter1_counts_six_routes_and_lists_them():
    text = _notebook_text("01_city_at_night.ipynb")
    assert "five routes" not in text.lower() and "Five routes" not in text
    assert "Six routes" in text and "peer-to-peer over PCIe" in text
    assert len(cl.ROUTES) == 6
    assert "4.1 µs" not in text and "205 kB" not in text          # the old round-trip alpha
    p = cl.route_parameters("rdma", distance_m=10)
    assert f"{p['latency_s'] * p['bw_bytes_per_s'] / 1e3:.0f} kB" in text


def test_pageable_ratio_depends_on_size_as_measured_on_the_h200():
    for size, measured in H200_H2D_RATIO.items():
        model = cl.pageable_over_pinned(size)
        if measured >= 1:            # small uploads: pageable is not penalised
            assert model == pytest.approx(1.0)
        else:
            assert model == pytest.approx(measured, rel=0.02), size
    assert cl.pageable_over_pinned(2048) > 0.95
    # one catalog ratio (0.3) for every size would miss both ends
    r = cl.MEASURED["pageable_over_pinned_x86"].value
    assert abs(r - H200_H2D_RATIO[65536]) > 0.2 and abs(r - H200_H2D_RATIO[2**30]) > 0.15
    # the time model follows the same curve
    t_pin = cl.host_copy_time_s(2**20, measured=True)
    t_pg = cl.host_copy_time_s(2**20, memory="pageable", measured=True)
    assert t_pg > t_pin
    assert cl.host_copy_time_s(1024, memory="pageable") == cl.host_copy_time_s(1024)
    with pytest.raises(ValueError, match="direction"):
        cl.host_copy_time_s(1024, direction="up")


def test_chapter4_says_where_pageable_gets_near_pinned():
    text = _notebook_text("04_freight_fleet.ipynb")
    assert "never get near" not in text
    assert "mlock" in text and "what `cudaHostAlloc` does)" not in text
    assert "16 KiB" in text


def test_batching_with_the_gather_copy():
    n, piece = 256, 64e3
    bw = cl.host_copy_bw_bytes_per_s(5, measured=True)
    a = lat("pcie_small_copy_sync")
    as_is = n * (a + piece / bw) + n * cl.pageable_extra_time_s(piece)
    no_gather = cl.batched_transfer_time_s(n, piece, bw, a)
    gather = cl.pageable_extra_time_s(n * piece)
    with_gather = cl.batched_transfer_time_s(n, piece, bw, a, gather_time_s=gather)
    assert with_gather == pytest.approx(no_gather + gather)
    assert as_is / no_gather > 8                      # the old "about 9x"
    assert 1.5 < as_is / with_gather < 4              # once the pieces must be gathered
    with pytest.raises(ValueError, match="gather_time_s"):
        cl.batched_transfer_time_s(n, piece, bw, a, gather_time_s=-1)


def test_roce_small_message_latency_is_sourced_and_tcp_is_labelled_one_way():
    roce = cl.LATENCIES["roce_small_one_way"]
    # issue 30: RoCE's base latency is InfiniBand's (1-2 us); the untuned 5.8 us report stays
    # named as such in the source, not as the catalog's figure
    assert "eugr/spark-vllm-docker" in roce.source and "docs/NETWORKING.md" in roce.source
    assert "#6242" in roce.source
    assert 1e-6 <= roce.value <= 2e-6 and roce.direction == "n/a"
    assert "PFC/ECN" in roce.note and "one way" in roce.note
    assert "one way" in cl.LATENCIES["tcp_kernel_path"].note
    sources = (ROOT / "docs" / "sources.md").read_text()
    assert "#6242" in sources and "eugr/spark-vllm-docker" in sources


def test_half_bandwidth_size_of_pcie4_x8_is_below_64_kB():
    b = cl.pcie_bw_per_dir_bytes_per_s(4, lanes=8)
    d_half = cl.half_bandwidth_bytes(lat("pcie_small_copy"), b)
    assert d_half == pytest.approx(42.5e3, rel=0.01)
    text = _notebook_text("03_arterial_roads.ipynb")
    assert "below the half-bandwidth size" not in text
    assert "42.5 kB" in text


def test_slider_exercises_ask_only_for_reachable_values():
    # the size slider moves in log steps: 8 bytes is not one of them
    assert "set the message to 8 bytes" not in _notebook_text("05_high_speed_rail.ipynb")
    assert "smallest message" in _notebook_text("05_high_speed_rail.ipynb")
    text = _notebook_text("01_city_at_night.ipynb")
    assert "first slider step" in text


def test_crossover_readout_compares_delivered_bandwidths():
    ex = explorers.ch03_crossover
    d = ex.explorer().update(gpu="A100", nvlink_links=1, n_bytes=1e7)
    assert d["staged_bw_bytes_per_s"] == pytest.approx(cl.pcie_bw_per_dir_bytes_per_s(4) / 2)
    assert d["bw_ratio"] == pytest.approx(25e9 / (31.5e9 / 2), rel=0.01)
    text = ex.readout(d)
    assert "more bandwidth)" not in text.split("staging")[-1]      # 25 < 31.5 is never "more"
    assert "PCIe peer-to-peer wins above" in text
    assert d["t_pcie_p2p_s"] < d["t_nvlink_s"] < d["t_pcie_s"]      # 10 MB


def test_chapter0_does_not_undercount_the_catalog():
    text = _notebook_text("00_start_here.ipynb")
    assert "ninety numbers" not in text
    assert len(cl.all_facts()) > 130
    assert "from course_lib.apps import doctor" in text


def test_chapter6_says_nccl_detects_the_topology_itself():
    text = _notebook_text("06_road_map.ipynb")
    assert "reads it to build its rings" not in text
    assert "NCCL_TOPO_DUMP_FILE" in text


def test_seed_slips_in_chapters_2_and_4_are_corrected():
    t2 = _notebook_text("02_maglev_line.ipynb")
    rec = cl.nvlink_generation(4)
    literal = rec.lanes_per_link_per_dir * rec.lane_rate_gbit_per_s * rec.links * 2
    assert literal == 7200 and "7,200" in t2
    assert literal / 8 == cl.gpu("H100").nvlink_bw_bidir_bytes_per_s / 1e9
    t4 = _notebook_text("04_freight_fleet.ipynb")
    assert "pinning is paid once" in t4
    assert round(2**30 / 1e9, 3) == 1.074 and "1.074 s" in t4
