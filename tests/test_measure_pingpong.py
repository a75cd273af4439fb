"""Tests of course_lib.measure.pingpong: loopback TCP vs shared memory."""

import os
import time

import pytest

from course_lib.measure.harness import LabResult
from course_lib.measure.pingpong import (ShmPingPong, TcpPingPong, cpu_situation,
                                         explain_kernel_bypass, kernel_bypass_lab)


@pytest.fixture(scope="module")
def res():
    return kernel_bypass_lab((8, 4096, 65536), repeats=3, number=5, budget_s=0.3,
                             progress=False)


def test_records_and_units(res):
    assert res.variants() == ["tcp-loopback", "shared-memory"]
    for r in res.records:
        assert r["one_way_s"] == pytest.approx(r["median_s"] / 2)
        assert r["bw_bytes_per_s"] == pytest.approx(2 * r["n_bytes"] / r["median_s"])
        assert r["round_trips_per_sample"] == 5
        # a round trip cannot beat a microsecond-scale floor nor take a second
        assert 1e-7 < r["median_s"] < 0.5


def test_summary_compares_the_two_paths(res):
    s = res.summary
    assert s["latency_ratio"] == pytest.approx(s["tcp_rtt_s"] / s["shm_rtt_s"])
    assert s["tcp_rtt_s"] > 0 and s["shm_rtt_s"] > 0
    assert set(res.fits) == {"tcp-loopback", "shared-memory"}


@pytest.mark.parametrize("cls", [TcpPingPong, ShmPingPong])
def test_echo_comes_back_intact_and_cleans_up(cls):
    with cls(1 << 16, timeout_s=5) as pp:
        for n in (1, 100, 1 << 16):
            pp.received[:] = 0
            pp.rtt(n)
            assert pp.check_echo(n)
        proc = pp.proc
        name = pp.shm.name if cls is ShmPingPong else None
    assert pp.proc is None and not proc.is_alive()
    if name:
        assert not os.path.exists(f"/dev/shm/{name.lstrip('/')}")


def test_a_dead_partner_times_out_instead_of_hanging():
    pp = ShmPingPong(4096, timeout_s=0.5)
    with pp:
        pp.rtt(8)
        pp.proc.kill()
        pp.proc.join(2)
        t0 = time.monotonic()
        with pytest.raises(TimeoutError):
            pp.rtt(8)
        assert time.monotonic() - t0 < 5
    assert pp.proc is None


def test_spawn_start_method_works():
    res = kernel_bypass_lab((8,), variants="shared-memory", repeats=2, number=3,
                            progress=False, start_method="spawn")
    assert res.records[0]["median_s"] > 0


@pytest.mark.parametrize("kw, msg", [({"sizes_bytes": [0]}, "sizes_bytes"),
                                     ({"variants": ["udp"]}, "variants"),
                                     ({"timeout_s": 0}, "timeout_s"),
                                     ({"start_method": "thread"}, "start_method"),
                                     ({"wait": "poll"}, "wait")])
def test_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        kernel_bypass_lab(**kw, progress=False)


def test_the_cpu_situation_is_measured_and_reported(res):
    sit = cpu_situation()
    assert sit["cpus_available"] == len(os.sched_getaffinity(0)) >= 1
    assert sit["oversubscribed"] == (sit["cpus_available"] < 2 or sit["free_cpus"] < 1.5)
    m = res.metadata
    assert m["wait"] in ("spin", "block")
    # auto: spin only with two free CPUs, and then the partners sit on two CPUs
    assert m["wait"] == ("block" if m["oversubscribed"] else "spin")
    if m["wait"] == "spin" and m["cpus_available"] >= 2:
        assert len(set(m["pinned_cpus"])) == 2
    assert os.sched_getaffinity(0) == set(sit["cpus"])       # the notebook's CPUs restored


@pytest.mark.parametrize("wait", ["spin", "block"])
def test_both_wait_modes_echo_intact(wait):
    with ShmPingPong(4096, timeout_s=5, wait=wait) as pp:
        for n in (1, 4096):
            pp.received[:] = 0
            pp.rtt(n)
            assert pp.check_echo(n)


def test_one_busy_core_blocks_and_shared_memory_still_wins():
    """On one CPU, auto picks the blocking wait, and the bypass keeps an edge."""
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(saved)})
    try:
        r = kernel_bypass_lab((8,), repeats=5, number=20, budget_s=1.0, progress=False)
    finally:
        os.sched_setaffinity(0, saved)
    assert r.metadata["cpus_available"] == 1 and r.metadata["oversubscribed"]
    assert r.metadata["wait"] == "block" and r.metadata["pinned_cpus"] is None
    # spinning here gave ratios of 0.02; blocking keeps shared memory ahead of TCP
    assert r.summary["latency_ratio"] > 1


def _fake(ratio, wait="spin", oversubscribed=False):
    r = LabResult(name="pingpong")
    r.summary.update({"latency_ratio": ratio, "tcp_rtt_s": 30e-6,
                      "shm_rtt_s": 30e-6 / ratio, "smallest_n_bytes": 8})
    r.metadata.update({"wait": wait, "pinned_cpus": [0, 1] if wait == "spin" else None,
                       "cpus_available": 2, "load_average_1min": 1.7,
                       "oversubscribed": oversubscribed})
    return r


def test_the_explanation_reads_the_numbers():
    low = explain_kernel_bypass(_fake(0.05, oversubscribed=True))
    assert "0.05" in low and "lost" in low and "polls" in low and "oversubscribed" in low
    high = explain_kernel_bypass(_fake(6.0))
    assert "**6**" in high and "several times" in high and "lost" not in high
    mid = explain_kernel_bypass(_fake(1.5, wait="block"))
    assert "1.5" in mid and "pipe" in mid and "system call" in mid
    assert "**104**" in explain_kernel_bypass(_fake(104.4))        # not 1e+02
    assert "Run both" in explain_kernel_bypass(LabResult(name="pingpong"))
