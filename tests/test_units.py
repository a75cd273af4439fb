import math

import pytest

from course_lib import units as u


@pytest.mark.parametrize("text, expected", [
    ("25 GB/s", 25e9), ("400 Gb/s", 50e9), ("400Gbps", 50e9), ("100 Gbps", 12.5e9),
    ("1 GiB/s", 2**30), ("12", 12.0), ("1.5e3 MB/s", 1.5e9),
])
def test_parse_bandwidth(text, expected):
    assert u.parse_bandwidth(text) == pytest.approx(expected)


@pytest.mark.parametrize("text, expected", [
    ("1 GiB", 2**30), ("1GB", 1e9), ("16G", 16e9), ("8", 8.0), ("64 KiB", 65536),
    ("8 Gb", 1e9), ("1 TB", 1e12), (4096, 4096.0),
])
def test_parse_size(text, expected):
    assert u.parse_size(text) == pytest.approx(expected)


def test_bits_and_bytes_differ_by_eight():
    assert u.parse_bandwidth("400 Gb/s") * 8 == u.parse_bandwidth("400 GB/s")
    assert u.gbit_per_s(800) == u.gbyte_per_s(100)


@pytest.mark.parametrize("text", ["fast", "10 XB/s", "GB/s", "-", "1 GB"])
def test_parse_bandwidth_rejects(text):
    with pytest.raises(ValueError, match="bandwidth"):
        u.parse_bandwidth(text)


@pytest.mark.parametrize("bad", [None, True, [1], object()])
def test_parse_size_type_errors(bad):
    with pytest.raises(TypeError, match="size"):
        u.parse_size(bad)


def test_parse_size_negative():
    with pytest.raises(ValueError, match=">= 0"):
        u.parse_size("-3 GB")


def test_parse_time():
    assert u.parse_time("2 us") == pytest.approx(2e-6)
    assert u.parse_time("1.5ms") == pytest.approx(1.5e-3)
    with pytest.raises(ValueError, match="unknown time unit"):
        u.parse_time("3 fortnights")


def test_format_round_trip():
    for bw in (12.5e9, 450e9, 63.015e9, 1.8e12):
        assert u.parse_bandwidth(u.format_bandwidth(bw, digits=6)) == pytest.approx(bw)
    assert u.format_bandwidth(50e9, bits=True) == "400 Gb/s"
    assert u.format_bytes(2**30, binary=True) == "1 GiB"
    assert u.format_time(0.054) == "54 ms"


def test_checks_name_the_parameter():
    with pytest.raises(ValueError, match="n_ranks"):
        u.check_int(0, "n_ranks", minimum=1)
    with pytest.raises(ValueError, match=r"fraction.*\[0, 1\]"):
        u.check_fraction(1.5, "fraction")
    with pytest.raises(ValueError, match="bw"):
        u.check_positive(0, "bw")
    with pytest.raises(ValueError, match="finite"):
        u.check_real(math.inf, "x")
    with pytest.raises(TypeError, match="x must be a real number"):
        u.check_real("3", "x")
    assert u.check_int(8.0, "n") == 8
    with pytest.raises(ValueError, match="whole number"):
        u.check_int(8.5, "n")
