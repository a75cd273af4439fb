"""The catalog: sourced, directional, and the seeds' errors corrected."""

import pytest

import course_lib as cl
from course_lib import hardware as hw


def test_every_fact_has_source_and_direction():
    rows = hw.all_facts()
    assert len(rows) > 30
    for name, value, unit, direction, source in rows:
        assert source and len(source) > 10, name
        assert direction in ("per direction", "bidirectional", "n/a"), name
        if unit == "bytes/s":
            assert direction != "n/a", f"{name}: a bandwidth must say its direction"
        assert value >= 0, name  # 0 is real: DGX-1 has no NVSwitch, NCCL Tree/Simple base latency is 0


@pytest.mark.parametrize("gen, per_link, links, total_bidir", [
    (1, 20, 4, 160), (2, 25, 6, 300), (3, 25, 12, 600), (4, 25, 18, 900), (5, 50, 18, 1800),
])
def test_nvlink_table_matches_facts(gen, per_link, links, total_bidir):
    rec = hw.nvlink_generation(gen)
    assert rec.per_link_per_dir_bytes_per_s == pytest.approx(per_link * 1e9)
    assert rec.links == links
    assert rec.total_bidir_bytes_per_s == pytest.approx(total_bidir * 1e9)
    assert rec.total_per_dir_bytes_per_s * 2 == pytest.approx(rec.total_bidir_bytes_per_s)


def test_seed_error_single_link_is_not_900():
    # "single NVLink link up to 900 GB/s (H100)": 900 is 18 links, both ways.
    h100 = cl.gpu("H100")
    assert h100.nvlink_per_link_per_dir_bytes_per_s == pytest.approx(25e9)
    assert h100.nvlink_bw_bidir_bytes_per_s == pytest.approx(900e9)


def test_seed_error_a100_vs_pcie4_is_about_9_5x_not_20x():
    a100 = cl.gpu("A100")
    ratio = a100.nvlink_bw_per_dir_bytes_per_s / cl.pcie_bw_per_dir_bytes_per_s(4)
    assert ratio == pytest.approx(300 / 31.5, rel=0.01)
    # one NVLink3 link is slower than a PCIe Gen4 x16 link
    assert a100.nvlink_per_link_per_dir_bytes_per_s < cl.pcie_bw_per_dir_bytes_per_s(4)


def test_seed_error_h100_vs_pcie5_is_7x_not_14x():
    ratio = cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s / cl.pcie_bw_per_dir_bytes_per_s(5)
    assert 7.0 < ratio < 7.2
    assert cl.pcie_bw_per_dir_bytes_per_s(5) * 2 == pytest.approx(126e9, rel=0.01)


def test_seed_error_b200_is_1800_bidir_not_1200():
    assert cl.gpu("B200").nvlink_bw_bidir_bytes_per_s == pytest.approx(1.8e12)


@pytest.mark.parametrize("gen, expected_gb", [(3, 15.75), (4, 31.5), (5, 63.0), (6, 121.0)])
def test_pcie_x16_per_direction(gen, expected_gb):
    assert cl.pcie_bw_per_dir_bytes_per_s(gen) / 1e9 == pytest.approx(expected_gb, rel=0.005)


def test_pcie_scales_with_lanes():
    assert cl.pcie_bw_per_dir_bytes_per_s(4, lanes=8) * 2 == pytest.approx(
        cl.pcie_bw_per_dir_bytes_per_s(4, lanes=16))


def test_nccl_pcie_planning_is_below_the_wire():
    for gen in (3, 4, 5):
        rec = hw.pcie_generation(gen)
        assert rec.nccl_planning_x16_bytes_per_s < rec.per_dir_bytes_per_s(16)


def test_systems():
    assert cl.system("DGX-2").nvswitches == 12  # not 6
    assert cl.system("DGX A100").nvswitches == 6
    assert cl.system("DGX H100").nvswitches == 4 and cl.system("DGX H100").nvls
    assert cl.system("DGX-1").wiring == "hybrid cube-mesh"
    nvl72 = cl.system("GB200 NVL72")
    assert (nvl72.n_gpus, nvl72.nvswitches) == (72, 18)
    assert cl.gpu(nvl72.gpu).nvlink_bw_per_dir_bytes_per_s == pytest.approx(900e9)


@pytest.mark.parametrize("name, gbit", [("EDR", 100), ("HDR", 200), ("NDR", 400), ("XDR", 800)])
def test_infiniband_bits_to_bytes(name, gbit):
    assert cl.nic(name).bw_per_dir_bytes_per_s == pytest.approx(gbit * 1e9 / 8)


def test_nccl_link_constants_below_wire_rate():
    for g in cl.GPUS.values():
        assert g.nccl_link_bw_bytes_per_s < g.nvlink_per_link_per_dir_bytes_per_s


def test_lookup_errors_name_the_choices():
    with pytest.raises(ValueError, match="H100"):
        cl.gpu("H900")
    with pytest.raises(TypeError):
        cl.gpu(100)
    with pytest.raises(ValueError, match="gen"):
        cl.pcie_bw_per_dir_bytes_per_s(2)
    with pytest.raises(ValueError, match="lanes"):
        cl.pcie_bw_per_dir_bytes_per_s(4, lanes=3)
    with pytest.raises(ValueError, match="nic"):
        cl.nic("OmniPath")


def test_gpu_aliases():
    assert cl.gpu("NVIDIA H100-SXM").name == "H100"
    assert cl.gpu(" a100 ").name == "A100"


def test_catalog_table_renders_every_row():
    table = hw.catalog_table()
    assert table.count("\n") == len(hw.all_facts()) + 1
    assert "per direction" in table
