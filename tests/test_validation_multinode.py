"""Multi-node held-out runs in the validation CSV (issue 13): the transcriptions
match their sources, and rows whose bandwidths come from the time column obey
the nccl-tests definitions (algbw = bytes / time; busbw = algbw x 2(n-1)/n for
AllReduce, (n-1)/n for AllGather and ReduceScatter)."""

import pytest

from course_lib import predict

TIME_NOTE = "algbw/busbw from the time column"


def _rows(system):
    return [r for r in predict.validation_rows(split="heldout") if r["system"] == system]


def test_rows_computed_from_the_time_column_follow_the_nccl_tests_definitions():
    checked = 0
    for r in predict.validation_rows():
        if TIME_NOTE not in r["note"]:
            continue
        n = int(r["gpus"])
        factor = 2 * (n - 1) / n if r["collective"] == "AllReduce" else (n - 1) / n
        algbw = r["n_bytes"] / float(r["time_us"]) / 1e3  # GB/s, as nccl-tests prints
        assert float(r["algbw_GBps"]) == pytest.approx(algbw, rel=1e-4), r["system"]
        assert float(r["busbw_GBps"]) == pytest.approx(algbw * factor, rel=1e-4), r["system"]
        checked += 1
    assert checked >= 50


@pytest.mark.parametrize("system, n_nodes, sizes, points", [
    # NVIDIA/nccl-tests #309 (qoofyk): 16 ranks, 8 B ... 16 GiB, out-of-place busbw
    ("Dell XE9680 H100 x2 nodes, 8x 400G IB (nccl-tests #309)", [2], 32,
     {2**20: 27.33, 2**30: 448.90, 2**34: 469.21}),
    # same thread, 32 ranks on four VMs
    ("H100 x4 VMs, 8x 400G IB (nccl-tests #309)", [4], 32,
     {2**21: 21.24, 2**30: 358.14, 2**34: 365.84}),
    # same thread (gj-aion): 2, 4 and 8 nodes, 1 MiB ... 8 GiB each
    ("H100 x2/x4/x8 nodes, IB 400G (nccl-tests #309 gj-aion)", [2, 4, 8], 42,
     {2**23: 103.78, 2**33: 466.73}),
    # NVIDIA/nccl-tests #290 (shahizat): 8 MiB ... 8 GiB
    ("H100 x2 nodes, 8x NDR 400G (nccl-tests #290)", [2], 11,
     {2**23: 73.04, 2**33: 155.57}),
    # aws-samples/aws-efa-eks README: 2x p4d.24xlarge, 8 B ... 1 GiB
    ("AWS p4d.24xlarge x2 on EKS (aws-efa-eks)", [2], 28,
     {2**20: 4.07, 2**30: 32.71}),
])
def test_multi_node_transcriptions_match_their_tables(system, n_nodes, sizes, points):
    rows = _rows(system)
    assert len(rows) == sizes
    assert sorted({int(r["nodes"]) for r in rows}) == n_nodes
    first_nodes = [r for r in rows if int(r["nodes"]) == n_nodes[0]]
    got = {r["n_bytes"]: float(r["busbw_GBps"]) for r in first_nodes}
    for size, busbw in points.items():
        assert got[size] == busbw
    for r in rows:
        assert int(r["gpus"]) == 8 * int(r["nodes"])
        assert r["time_us"].strip(), "every multi-node row keeps its time column"
