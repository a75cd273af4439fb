"""The catalog: sourced, directional, and the seeds' errors corrected."""

from pathlib import Path

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


# --- the package: one home per number, every number listed -------------------
def _facts_reachable_in_the_package():
    """Every Fact object held by a module of course_lib.hardware, found by
    walking the modules' names and the dicts, lists and tuples they hold."""
    import importlib
    import pkgutil

    found, seen = {}, set()

    def walk(obj, where):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, hw.Fact):
            found.setdefault(id(obj), (where, obj))
        elif isinstance(obj, dict):
            for key, value in obj.items():
                walk(value, f"{where}[{key!r}]")
        elif isinstance(obj, (list, tuple)):
            for i, value in enumerate(obj):
                walk(value, f"{where}[{i}]")

    modules = [hw] + [importlib.import_module(f"{hw.__name__}.{m.name}")
                      for m in pkgutil.iter_modules(hw.__path__)]
    for mod in modules:
        for name, value in vars(mod).items():
            walk(value, f"{mod.__name__}.{name}")
    return found


def test_every_fact_in_the_package_is_listed():
    reachable = _facts_reachable_in_the_package()
    assert len(reachable) > 90
    listed = {id(fact) for _name, fact in hw.listed_facts()}
    missing = [where for key, (where, _f) in reachable.items() if key not in listed]
    assert not missing, f"Facts not in the catalog (add their table to FACT_TABLES): {missing}"


def test_catalog_lists_compute_memory_and_future_links():
    names = {row[0] for row in hw.all_facts()}
    for key in hw.GPU_PEAK_FLOPS:
        assert f"gpu_peak_flops: {key}" in names
    for key in hw.GPU_HBM_BW:
        assert f"gpu_hbm_bw: {key}" in names
    for key in hw.FUTURE_LINKS:
        assert f"future_links: {key}" in names
    for gen, rec in hw.PCIE_GENERATIONS.items():
        row = [r for r in hw.all_facts() if r[0] == f"PCIe Gen{gen} x16 NCCL planning"]
        assert row and row[0][1] == rec.nccl_planning_x16_bytes_per_s


def test_python_m_course_lib_catalog_prints_every_fact(tmp_path):
    import os
    import pathlib
    import subprocess
    import sys

    repo = pathlib.Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    out = subprocess.run([sys.executable, "-m", "course_lib", "catalog"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == len(hw.all_facts()) + 2          # header and rule
    printed = {line.split(" | ")[0].removeprefix("| ") for line in lines[2:]}
    assert printed == {row[0] for row in hw.all_facts()}
    assert "| gpu_peak_flops: H100 | 989 TFLOP/s |" in out.stdout


def test_hop_latencies_are_typed_once():
    # the start-up table's NCCL hops are NCCL's Ring/LL hwLat, read from NCCL_TUNING
    for kind in hw.HOP_KINDS:
        assert hw.latency_s(f"nccl_hop_{kind}") == hw.nccl_hop_s("ring", "ll", kind)
    assert hw.nccl_hop_s("tree", "simple", "net") == hw.nccl_tuning("tree_simple_hop_net")
    assert hw.nccl_hop_s("ring", "simple", "nvlink") == pytest.approx(3.4e-6)
    with pytest.raises(ValueError, match="kind"):
        hw.nccl_hop_s("ring", "ll", "ethernet")
    with pytest.raises(ValueError, match="algorithm"):
        hw.nccl_hop_s("nvls", "simple", "net")
    # one network payload fraction, not two copies of 0.96
    assert hw.CALIBRATION["net_efficiency"] is hw.NETWORK["InfiniBand_efficiency"]


# --- the data files: package data, one reader ---------------------------------
def test_data_path_finds_the_package_data():
    assert hw.data_path("calibration_measurements.csv").is_file()
    assert hw.data_path("validation", "topo").is_dir()
    assert hw.data_path().parent.name == "course_lib"
    with pytest.raises(ValueError, match="parts"):
        hw.data_path("no_such_file.csv")
    with pytest.raises(ValueError, match="parts"):
        hw.data_path("../pyproject.toml")
    with pytest.raises(TypeError, match="parts"):
        hw.data_path(3)


def test_one_calibration_loader_serves_rows_and_curves(tmp_path):
    rows = hw.calibration_rows()
    curves = hw.calibration_curves()
    assert len(rows) == sum(len(c["n_bytes"]) for c in curves.values()) > 20
    a100 = [r for r in rows if r["system"].startswith("A100") and r["collective"] == "AllReduce"]
    curve = curves[(a100[0]["system"], "AllReduce")]
    assert curve["n_bytes"] == [r["bytes"] for r in a100]
    assert curve["busbw_bytes_per_s"] == [r["busbw_GBps"] * 1e9 for r in a100]
    # a missing file: no rows for the chapters, an error for the fitter
    assert hw.calibration_rows(tmp_path / "none.csv") == []
    with pytest.raises(ValueError, match="path"):
        hw.calibration_curves(tmp_path / "none.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("system,bytes\nx,1\n")
    with pytest.raises(ValueError, match="calibration CSV"):
        hw.calibration_rows(bad)


def test_measured_peer_copies_on_hgx_h100_are_cited_and_between_the_models():
    """Issue 30: the driver's staged copy (peer access off) measures 36-38 GB/s on an HGX
    H100 (NVIDIA/nccl#1264): above the store-and-forward model (half a Gen5 link), below
    the pipelined one (a full link), about 2/3 of a pinned copy over one leg."""
    MEASURED = hw.MEASURED
    staged = MEASURED["p2p_staged_8xH100"]
    nvlink = MEASURED["p2p_nvlink_8xH100"]
    pcie = hw.pcie_bw_per_dir_bytes_per_s(5)
    for fact in (staged, nvlink):
        assert "NVIDIA/nccl issue #1264" in fact.source and fact.direction == "per direction"
    assert pcie / 2 < staged.value < pcie
    assert 0.6 < staged.value / MEASURED["h2d_pinned_pcie5"].value < 0.7
    spec = hw.gpu("H100").nvlink_bw_per_dir_bytes_per_s
    assert MEASURED["busbw_allreduce_8xH100_ring"].value < nvlink.value < spec


def test_dgx1_note_matches_the_cube_mesh_model():
    """Each DGX-1 GPU reaches 4 others (not 6): 6 links on a V100, 2 pairs doubled."""
    note = cl.hardware.system("DGX-1").note
    for gpu, links in (("V100", 6), ("P100", 4)):
        t = cl.topology.hybrid_cube_mesh_topology(gpu)
        gpus = [n for n in t.nodes if isinstance(n, int)]
        for g in gpus:
            assert t.degree(g) == 4
            assert sum(t.edges[g, h]["links"] for h in t.neighbors(g)) == links
        assert f"{links} ({gpu})" in note
        missing = len(gpus) * (len(gpus) - 1) // 2 - t.number_of_edges()
        assert f"{missing} of the {len(gpus) * (len(gpus) - 1) // 2} pairs have no" in note
    assert "4 of the 7" in note


ROOT = Path(__file__).resolve().parents[1]


US = 1e-6


H200_SYNC_SMALL_H2D = 7.30 * US          # 8 B, one synchronous copy, host clock


def lat(name):
    return cl.LATENCIES[name].value


def test_end_to_end_copy_is_at_least_its_parts():
    sync, gpu_side, api = lat("pcie_small_copy_sync"), lat("pcie_small_copy"), lat("cuda_api_call")
    assert sync >= api and sync >= gpu_side
    assert sync == pytest.approx(gpu_side + api)
    # the measurement it comes from, and the seeds' 5-10 us bracket it
    assert sync == pytest.approx(H200_SYNC_SMALL_H2D, rel=0.02)
    assert 5 * US <= sync <= 10 * US


def test_four_h100_aggregate_is_a_bidirectional_sum():
    h100 = cl.gpu("H100")
    assert 4 * h100.nvlink_bw_bidir_bytes_per_s == pytest.approx(3.6e12)
    assert 4 * h100.nvlink_bw_per_dir_bytes_per_s == pytest.approx(1.8e12)


def test_reading_100_gbit_as_gbyte_is_eight_times_off():
    edr = cl.nic("EDR")
    assert edr.bw_per_dir_bytes_per_s == pytest.approx(12.5e9)
    assert 100e9 / edr.bw_per_dir_bytes_per_s == pytest.approx(8.0)


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
