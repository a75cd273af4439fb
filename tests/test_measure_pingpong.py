"""Tests of course_lib.measure.pingpong: loopback TCP vs shared memory."""

import os
import time

import pytest

from course_lib.measure.pingpong import ShmPingPong, TcpPingPong, kernel_bypass_lab


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
                                     ({"start_method": "thread"}, "start_method")])
def test_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        kernel_bypass_lab(**kw, progress=False)
