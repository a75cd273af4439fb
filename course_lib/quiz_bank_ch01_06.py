"""Quiz questions of chapters 1-6 ("the roads"), as data.

Each chapter's short quiz: ``questions(3)`` returns chapter 3's list of
:class:`course_lib.quiz.Question`.  Hardware numbers in the options come from
the catalog, formatted with their direction, so a quiz never disagrees with
the chapter.  Several questions restate, in our own words, interview
questions of the seed articles (000: the city-transport overview, 003: the
NVLink article); where a seed's answer was wrong the question teaches the
corrected figure.  Chapter 11 collects all twenty interview questions.

>>> [len(questions(c)) >= 3 for c in range(1, 7)]
[True, True, True, True, True, True]
>>> all(set(q.why_wrong) | set(q.answer) == set(range(len(q.options)))
...     for c in range(1, 7) for q in questions(c))
True
"""

from __future__ import annotations

from .analytic import (batched_transfer_time_s, effective_utilisation, fibre_rtt_s,
                       host_copy_bw_bytes_per_s, route_crossover_bytes, route_parameters)
from .hardware import (LATENCIES, NVLINK_GENERATIONS, gpu, nic,
                       pcie_bw_per_dir_bytes_per_s, system)
from .quiz import Question
from .topology import fully_connected_topology, link_count
from .units import check_int, format_bandwidth, format_bytes, format_time

__all__ = ["questions"]


def _ch1():
    u = effective_utilisation(0.3, 0.1)
    return [
        Question(
            "A training step computes for 300 ms, then waits 100 ms for gradients to "
            "arrive (no overlap). What share of the time do the GPUs compute?",
            [f"{u:.0%}", "67%", "100%", "25%"], {0},
            f"U = T_comp / (T_comp + T_comm) = 300 / (300 + 100) = {u:.0%}.",
            {1: "That is 200/300: it divides by the wrong total.",
             2: "Only with perfect overlap or no communication at all.",
             3: "That is the communication share, T_comm / (T_comp + T_comm)."}),
        Question(
            "Match the freight to the road: weights from host memory to a GPU; "
            "activations between two GPUs of one server; gradients to a GPU in "
            "another server.",
            ["PCIe DMA; NVLink; RDMA over InfiniBand/RoCE",
             "NVLink; PCIe DMA; RDMA",
             "RDMA; NVLink; PCIe DMA",
             "NVLink for all three"], {0},
            "Host <-> GPU goes over PCIe (the arterial road), GPU <-> GPU in a server "
            "over NVLink (the maglev), server <-> server over the network by RDMA "
            "(the high-speed rail).",
            {1: "Host memory is reached over PCIe, not NVLink (except on NVLink-C2C "
                "superchips such as Grace Hopper).",
             2: "RDMA is for crossing between servers; the host is inside the server.",
             3: "NVLink ends at the edge of its NVLink domain; other servers are "
                "reached over the network."}),
        Question(
            "The city's planners trade off three things when they choose a road. "
            "Which pair is right?",
            ["Bandwidth sets how much moves per second; latency sets how long one "
             "trip takes to start arriving",
             "Bandwidth and latency are the same thing measured in different units",
             "Latency only matters for large messages",
             "A road with more bandwidth always has less latency"], {0},
            "Bandwidth (bytes/s) and latency (s) are separate axes; cost is the third "
            "corner of the triangle.",
            {1: "They have different units and different causes (width vs distance "
                "and overheads).",
             2: "It is the other way round: small messages are latency-bound.",
             3: "Not so: a PCIe route through the host has more bandwidth than a "
                "single NVLink link but a larger start-up cost (chapter 3)."}),
    ]


def _ch2():
    h100 = gpu("H100")
    one_link = h100.nvlink_per_link_per_dir_bytes_per_s
    total = h100.nvlink_bw_per_dir_bytes_per_s
    bidir = h100.nvlink_bw_bidir_bytes_per_s
    b200 = gpu("B200").nvlink_bw_bidir_bytes_per_s
    first = NVLINK_GENERATIONS[1].gpu
    return [
        Question(
            "Which GPU was the first to ship with NVLink?",
            ["V100", first, "A100", "H100"], {1},
            f"NVLink 1 arrived with the {first} (2016); V100, A100 and H100 carry "
            "NVLink 2, 3 and 4.",
            {0: "V100 has NVLink 2.", 2: "A100 has NVLink 3.", 3: "H100 has NVLink 4."},
            source="seed 003, interview question 2"),
        Question(
            "How much can one H100 send over all its NVLinks, in one direction?",
            [format_bandwidth(one_link), format_bandwidth(total),
             format_bandwidth(bidir), format_bandwidth(b200)], {1},
            f"18 links x {format_bandwidth(one_link)} = {format_bandwidth(total)} per "
            f"direction; {format_bandwidth(bidir)} is the marketing figure with both "
            "directions added.",
            {0: "That is one link, per direction.",
             2: "That adds both directions; one direction is half of it.",
             3: "That is a B200 (NVLink 5), both directions added."},
            source="seed 003, interview question 3 (corrected: say the direction)"),
        Question(
            "Compared with PCIe, which are true of NVLink? (choose all that apply)",
            ["Several times the bandwidth per GPU, per direction",
             "A GPU-to-GPU route that crosses no PCIe switch or CPU root complex",
             "Peer loads, stores and atomics at NVLink bandwidth",
             "Only NVLink lets one GPU reach another's memory without going through "
             "host memory", "It replaces PCIe entirely"], {0, 1, 2},
            f"An H100 has {format_bandwidth(total)} of NVLink per direction, about "
            f"{total / pcie_bw_per_dir_bytes_per_s(h100.pcie_gen):.0f}x its PCIe Gen5 "
            "x16 link, on its own route (through NVSwitch, not the PCIe tree), and "
            "kernels can load, store and do atomics on peer memory at that rate. "
            "PCIe still connects the GPU to the CPU, NICs and storage.",
            {3: "PCIe peer-to-peer also skips host memory where the topology allows "
                "(both GPUs under one PCIe switch, or a root complex that forwards "
                "peer traffic); what differs is bandwidth, route and scale.",
             4: "The server still needs PCIe for the host, NICs and disks (NVLink-C2C "
                "replaces it only between a Grace CPU and its GPU)."},
            source="seed 003, interview question 4"),
        Question(
            "What is NVLink-C2C built for?",
            ["A coherent CPU-to-GPU link inside a superchip (Grace Hopper)",
             "Linking racks in different buildings",
             "Connecting a monitor to the GPU",
             "Attaching storage arrays"], {0},
            "C2C (chip to chip) joins a Grace CPU and a Hopper or Blackwell GPU on one "
            "module, so host memory is reached without PCIe.",
            {1: "Between buildings you need a network (InfiniBand/Ethernet).",
             2: "That is DisplayPort/HDMI.",
             3: "Storage is attached over PCIe/NVMe or the network."},
            source="seed 003, interview question 10"),
    ]


def _ch3():
    ratio = gpu("H100").nvlink_bw_per_dir_bytes_per_s / pcie_bw_per_dir_bytes_per_s(5)
    d_star = route_crossover_bytes(route_parameters("p2p-nvlink", gpu="H100", nvlink_links=1),
                                   route_parameters("p2p-staged", gpu="H100"))
    return [
        Question(
            "A widely shared article compares 'NVLink 900 GB/s' with 'PCIe Gen5 x16 "
            "64 GB/s' and concludes NVLink is 14x faster. Like for like, what is the "
            "ratio for an H100?",
            ["about 14x", f"about {ratio:.0f}x", "about 20x", "about 3.5x"], {1},
            f"Per direction: {format_bandwidth(gpu('H100').nvlink_bw_per_dir_bytes_per_s)}"
            f" / {format_bandwidth(pcie_bw_per_dir_bytes_per_s(5))} = {ratio:.1f}x. The "
            "900 adds both directions, the 64 does not.",
            {0: "That divides a bidirectional figure by a one-direction figure.",
             2: "That is the A100 claim (600 vs 32), which mixes directions too.",
             3: "That would compare one direction with both directions the other way "
                "round."}),
        Question(
            "Two H100s are joined by a single NVLink link; the other route stages "
            "through host memory over PCIe Gen5. Which is faster for a 100 MB tensor?",
            ["NVLink, always", "PCIe through the host",
             "They take exactly the same time", "It cannot be decided"], {1},
            "One NVLink 4 link carries less than PCIe Gen5 x16 even after the two "
            "copies through the host, so above the crossover size (about "
            f"{format_bytes(d_star)}) the "
            f"PCIe route wins; below it NVLink's smaller start-up wins.",
            {0: "Only the full bundle of links is faster than PCIe at every size.",
             2: "They are equal only at the crossover size.",
             3: "T = alpha + legs x D / B decides it: compute both."}),
        Question(
            "Which of these change the time of one PCIe DMA copy, T = T_setup + D / B? "
            "(choose all that apply)",
            ["The start-up cost T_setup", "The number of bytes D",
             "The link bandwidth B", "The number of CUDA cores on the GPU"],
            {0, 1, 2},
            "The model has exactly three inputs; the GPU's compute units do not move "
            "the data (the copy engine does).",
            {3: "Copies are done by DMA copy engines, not by the CUDA cores."},
            source="seed 000, interview question 10"),
    ]


def _ch4():
    alpha = LATENCIES["pcie_small_copy_sync"].value
    bw = host_copy_bw_bytes_per_s(5, "pinned", measured=True)
    sep = batched_transfer_time_s(1000, 4096, bw, alpha, batched=False)
    bat = batched_transfer_time_s(1000, 4096, bw, alpha)
    return [
        Question(
            "What does pinned (page-locked, 锁页内存) host memory do for a DMA copy?",
            ["It keeps the pages at fixed physical addresses, so the DMA engine can "
             "read them while the copy runs",
             "It raises the CPU clock", "It widens the PCIe link",
             "It saves GPU memory"], {0},
            "The OS may move or swap ordinary (pageable) pages; the copy engine works "
            "on physical addresses, so the pages must stay put.",
            {1: "Pinning changes nothing about the CPU's clock.",
             2: "The link width is set by the slot and the GPU.",
             3: "Pinning is about host memory, not GPU memory."},
            source="seed 000, interview question 2"),
        Question(
            f"1000 copies of 4 KiB over PCIe Gen5, each waited for, at the measured "
            f"{format_time(alpha)} end-to-end start-up of one small copy. Roughly how "
            "long one by one, and batched into one copy?",
            [f"{format_time(sep)} vs {format_time(bat)}",
             "the same time either way",
             f"{format_time(bat)} vs {format_time(sep)}",
             f"{format_time(1000 * alpha)} vs {format_time(1000 * alpha)}"], {0},
            "One by one: N (alpha + d/B); batched: alpha + N d / B. Batching saves "
            "(N - 1) alpha.",
            {1: "Each separate copy pays the start-up again.",
             2: "That is the wrong way round.",
             3: "Batching pays the start-up only once."}),
        Question(
            "DMA means the CPU does not copy the bytes. What does the CPU still do? "
            "(choose all that apply)",
            ["Pin (or stage) the host memory", "Write the copy's descriptors and "
             "launch it", "Handle the completion", "Nothing at all"], {0, 1, 2},
            "The copy engine moves the bytes, but the driver on the CPU prepares, "
            "launches and completes every copy: many small copies keep it busy.",
            {3: "That is the myth: every copy costs CPU work at both ends."}),
    ]


def _ch5():
    ndr = nic("NDR")
    rtt_km = fibre_rtt_s(1000)
    return [
        Question(
            "What is the key architectural idea of RDMA?",
            ["Kernel bypass: the NIC reads and writes application memory directly",
             "A wider cable", "Longer fibre", "It replaces NVLink"], {0},
            "No system call, no kernel copy, no interrupt per message: the NIC moves "
            "data between registered user buffers.",
            {1: "Port rates grow too, but that is not what makes it RDMA.",
             2: "Longer fibre only adds latency.",
             3: "RDMA connects servers; NVLink connects GPUs inside one. They work "
                "together."},
            source="seed 000, interview question 3"),
        Question(
            f"An InfiniBand {ndr.name} port is sold as {ndr.rate_gbit_per_s:g} Gb/s. "
            "How many bytes per second does it carry in one direction?",
            [format_bandwidth(ndr.bw_per_dir_bytes_per_s),
             format_bandwidth(ndr.bw_per_dir_bytes_per_s * 8),
             format_bandwidth(ndr.bw_per_dir_bytes_per_s * 2),
             format_bandwidth(ndr.bw_per_dir_bytes_per_s / 2)], {0},
            "Divide bits by 8: the port rate is per direction already.",
            {1: "That reads Gb as GB (bits as bytes).",
             2: "That adds both directions to a figure in bytes.",
             3: "Ports are quoted per direction; there is nothing to halve."}),
        Question(
            "Two servers are 1 km of fibre apart. Light in glass travels at about "
            "0.7 c. What is the round-trip propagation time alone?",
            [format_time(rtt_km), format_time(rtt_km / 1000),
             format_time(rtt_km * 1000), "zero: RDMA bypasses it"], {0},
            "2 x 1000 m / (0.7 x 3e8 m/s): about 10 us, before any switch, NIC or "
            "software latency.",
            {1: "That would be 1 m of fibre.", 2: "That would be 1000 km.",
             3: "Kernel bypass removes software overhead, not the speed of light."}),
    ]


def _ch6():
    n_links = link_count(fully_connected_topology(8))
    dgx2 = system("DGX-2")
    return [
        Question(
            "Compared with a full mesh, what is the main drawback of a ring?",
            ["Messages may cross many links; hops grow with the number of GPUs",
             "It needs more cables", "It cannot connect more than 4 GPUs",
             "It needs more switches"], {0},
            "Average hops on a ring grow like N/4 and the diameter is N/2; a full "
            "mesh is 1 hop everywhere but needs N(N-1)/2 cables.",
            {1: "A ring needs N cables, the fewest of any connected topology.",
             2: "Rings of any size work (NCCL builds rings over thousands of GPUs).",
             3: "A ring needs no switch at all."},
            source="seed 000, interview question 4"),
        Question(
            "How many point-to-point cables does a full mesh of 8 GPUs need?",
            ["8", "16", str(n_links), "64"], {2},
            "Every pair once: N(N-1)/2 = 8 x 7 / 2 = 28. The wiring grows as N squared.",
            {0: "That is a ring.", 1: "That counts each GPU's cables twice, or a "
             "cube-mesh's pairs.", 3: "That counts ordered pairs and self-loops."}),
        Question(
            "How many NVSwitch chips does a DGX-2 (16 V100) have?",
            ["6", str(dgx2.nvswitches), "4", "none"], {1},
            f"{dgx2.nvswitches}: two baseboards of 8 GPUs with 6 NVSwitches each. One "
            "seed article says 6.",
            {0: "6 is one baseboard; the seed's error.", 2: "4 is a DGX H100.",
             3: "The DGX-1 had none (hybrid cube-mesh); the DGX-2 introduced NVSwitch."}),
        Question(
            "What does NVSwitch give the GPUs of one NVLink domain?",
            ["Every pair can talk at full NVLink bandwidth through one switch "
             "crossing", "More GPU memory", "Graphics rendering", "Cooling"], {0},
            "A non-blocking crossbar: any GPU to any other in one switch crossing "
            "(two links, in and out), which the seeds call 'one hop'.",
            {1: "Memory capacity is the GPU's HBM.", 2: "NVSwitch does no rendering.",
             3: "It has nothing to do with cooling."},
            source="seed 003, interview question 5"),
    ]


_BANK = {1: _ch1, 2: _ch2, 3: _ch3, 4: _ch4, 5: _ch5, 6: _ch6}


def questions(chapter: int) -> list:
    """The quiz of ``chapter`` (1-6) as a list of :class:`~course_lib.quiz.Question`."""
    c = check_int(chapter, "chapter", minimum=1, maximum=6)
    return _BANK[c]()
