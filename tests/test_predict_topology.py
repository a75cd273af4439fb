"""Topology-aware predictions: sockets and PCIe paths, NIC placement, topology
dumps (nvidia-smi topo -m, NCCL XML), network kinds, pipelined multi-node
algorithms, and the held-out validation data (issue 13)."""

import pytest

import course_lib as cl
from course_lib import hardware as hw
from course_lib import predict
from course_lib.apps.cli import main as course_cli  # python -m course_lib ...

MIB = 2**20
TOPO_178 = (predict.validation_data_dir() / "topo" / "nccl-tests-178.txt").read_text()


# --- sockets, PCIe paths, NIC placement -----------------------------------------
def test_a_ring_across_sockets_is_held_to_the_socket_link():
    one = cl.cluster("A100", 8, fabric="pcie")
    two = cl.cluster("A100", 8, fabric="pcie", sockets=2, cpu="intel-skl")
    assert one.intra_bw_bytes_per_s() == pytest.approx(24e9)  # NCCL: Gen4 x16
    # Skylake UPI: NCCL plans 10 GB/s per direction between the sockets
    assert two.intra_bw_bytes_per_s() == pytest.approx(10e9)
    assert two.intra_hops() == ("PIX", "SYS")
    big = 2**30
    ratio = (cl.predict_collective("allreduce", big, one).busbw_bytes_per_s
             / cl.predict_collective("allreduce", big, two).busbw_bytes_per_s)
    assert ratio == pytest.approx(2.4, rel=0.05)


def test_intel_root_complex_charges_peer_copies_six_fifths():
    c = cl.cluster("H100", 4, fabric="pcie", pcie_path="host", cpu="intel-spr")
    assert c.intra_bw_bytes_per_s() == pytest.approx(48e9 / 1.2)
    amd = cl.cluster("H100", 4, fabric="pcie", pcie_path="host", cpu="amd-zen3")
    assert amd.intra_bw_bytes_per_s() == pytest.approx(48e9)


def test_a_nic_on_the_other_socket_is_held_to_the_socket_link():
    near = cl.cluster("A100", nodes=2, nic="HDR", nics_per_node=4)
    far = cl.cluster("A100", nodes=2, nic="HDR", nics_per_node=4, nic_path="remote",
                     cpu="intel-skl")
    assert near.nic_bw_bytes_per_s() == pytest.approx(25e9 * 0.96)
    assert far.nic_bw_bytes_per_s() == pytest.approx(10e9)


@pytest.mark.parametrize("kwargs, word", [
    (dict(fabric="pcie", sockets=2), "cpu"),
    (dict(nodes=2, nic="NDR", nic_path="remote"), "cpu"),
    (dict(cpu="intel-xyz"), "cpu"),
    (dict(sockets=3, fabric="pcie", cpu="amd-zen3"), "sockets"),
    (dict(sockets=2, cpu="amd-zen3"), "fabric='pcie'"),
    (dict(pcie_path="bus"), "pcie_path"),
    (dict(nic="NDR", nic_path="far"), "nic_path"),
    (dict(fabric="pcie", ring_hops=("NV4", "QPI")), "kind"),
])
def test_bad_topology_arguments_are_named(kwargs, word):
    with pytest.raises(ValueError, match=word):
        cl.cluster(**kwargs)
    with pytest.raises(TypeError, match="ring_hops"):
        cl.cluster(fabric="pcie", ring_hops="NV4")


# --- nvidia-smi topo -m ------------------------------------------------------------
def test_parse_nvidia_smi_topo_reads_the_matrix():
    t = predict.parse_nvidia_smi_topo(TOPO_178)
    assert t["gpus"] == [f"GPU{i}" for i in range(8)] and t["nics"] == []
    assert t["pair"][("GPU0", "GPU1")] == "NV12"
    assert t["pair"][("GPU1", "GPU3")] == "NODE"
    assert t["pair"][("GPU3", "GPU4")] == "SYS"
    assert t["numa"]["GPU0"] == 0 and t["numa"]["GPU7"] == 1
    assert len(t["pair"]) == 8 * 7


def test_cluster_from_topo_finds_the_ring_bottleneck():
    pair = predict.cluster_from_topo(TOPO_178, "A100", gpus=[0, 1])
    assert pair.intra_hops() == ("NV12",) and pair.intra_link_kind == "nvlink"
    assert pair.intra_bw_bytes_per_s() == pytest.approx(12 * 20e9)
    three = predict.cluster_from_topo(TOPO_178, "A100", gpus=[0, 1, 2])
    assert sorted(three.intra_hops()) == ["NODE", "NODE", "NV12"]
    assert three.intra_bw_bytes_per_s() == pytest.approx(24e9)
    # the best 4-GPU ring uses both bridges: NV12, NODE, NV12, NODE
    four = predict.cluster_from_topo(TOPO_178, "A100", gpus=[0, 1, 2, 3])
    assert four.intra_hops().count("NV12") == 2
    with pytest.raises(ValueError, match="cpu"):
        predict.cluster_from_topo(TOPO_178, "A100")  # all 8 cross the sockets
    eight = predict.cluster_from_topo(TOPO_178, "A100", cpu="intel-skl")
    assert eight.intra_hops().count("SYS") == 2
    assert eight.intra_bw_bytes_per_s() == pytest.approx(10e9)


def test_cluster_from_topo_recognises_nvswitch_and_mesh():
    rows = ["\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity"]
    for i in range(4):
        rows.append(f"GPU{i}\t" + "\t".join(" X " if j == i else "NV{k}" for j in range(4))
                    + "\t0-15")
    mesh = "\n".join(rows).replace("{k}", "4")
    switch = "\n".join(rows).replace("{k}", "18")
    assert predict.cluster_from_topo(mesh, "A100").fabric == "mesh"
    assert predict.cluster_from_topo(switch, "H100").fabric == "nvswitch"


@pytest.mark.parametrize("text, word", [
    ("no matrix here", "header"),
    ("\tGPU0\tGPU1\nGPU0\t X \tQPI\nGPU1\tQPI\t X \n", "topology word"),
    ("\tGPU0\tGPU1\nGPU0\t X \tSYS\n", "no row"),
])
def test_parse_rejects_bad_dumps(text, word):
    with pytest.raises(ValueError, match=word):
        predict.parse_nvidia_smi_topo(text)


def test_cluster_from_topo_checks_gpus_and_nics():
    with pytest.raises(ValueError, match="gpus"):
        predict.cluster_from_topo(TOPO_178, "A100", gpus=[0, 9])
    with pytest.raises(TypeError, match="gpus"):
        predict.cluster_from_topo(TOPO_178, "A100", gpus="0,1")
    with pytest.raises(ValueError, match="NIC"):
        predict.cluster_from_topo(TOPO_178, "A100", gpus=[0, 1], nodes=2, nic="HDR")


# --- NCCL topology XML ---------------------------------------------------------------
NCCL_XML = """<system version="1">
  <cpu numaid="0" affinity="ff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:10:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:11:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="90" rank="0" gdr="1"/>
      </pci>
      <pci busid="0000:12:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="1" sm="90" rank="1" gdr="1"/>
      </pci>
      <pci busid="0000:13:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic><net name="mlx5_0" dev="0" speed="400000" port="1" gdr="1"/></nic>
      </pci>
    </pci>
  </cpu>
  <cpu numaid="1" affinity="ff00" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:90:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:91:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="2" sm="90" rank="2" gdr="1"/>
      </pci>
    </pci>
  </cpu>
</system>"""


def test_parse_nccl_topo_xml_reads_sockets_switches_and_nics():
    t = predict.parse_nccl_topo_xml(NCCL_XML)
    assert t["gpus"] == ["GPU0", "GPU1", "GPU2"] and t["nics"] == ["mlx5_0"]
    assert t["pair"][("GPU0", "GPU1")] == "PIX"
    assert t["pair"][("GPU0", "GPU2")] == "SYS"
    assert t["pair"][("GPU2", "mlx5_0")] == "SYS"
    assert t["cpu"] == "intel-spr" and t["nic_gbps"]["mlx5_0"] == 400.0
    c = predict.cluster_from_topo(NCCL_XML, "H100")
    # the ring crosses Sapphire Rapids UPI (NCCL: 22 GB/s) below PCIe Gen5
    assert c.intra_bw_bytes_per_s() == pytest.approx(22e9)
    two = predict.cluster_from_topo(NCCL_XML, "H100", gpus=[0, 1], nodes=2, nic="NDR")
    assert two.nic_path == "switch" and two.nics_per_node == 1
    far = predict.cluster_from_topo(NCCL_XML, "H100", gpus=[2], nodes=2, nic="NDR")
    assert far.nic_path == "remote" and far.nic_bw_bytes_per_s() == pytest.approx(22e9)
    with pytest.raises(ValueError, match="XML"):
        predict.parse_nccl_topo_xml("<system><cpu>")


# --- network kinds ------------------------------------------------------------------
def test_network_kinds_set_efficiency_latency_and_allowed_algorithms():
    ib = cl.cluster("H100", nodes=2, nic="NDR")
    efa = cl.cluster("H100", nodes=2, nic="EFA-400")
    tcpxo = cl.cluster("H100", nodes=2, nic="TCPXO-200")
    assert efa.nic_bw_bytes_per_s() / ib.nic_bw_bytes_per_s() == pytest.approx(
        hw.network_efficiency("EFA") / hw.network_efficiency("InfiniBand"))
    # GCP's TCPXO profile: Ring and Tree with the Simple protocol, no NVLS
    for size in (8, MIB, 2**30):
        p = cl.predict_collective("allreduce", size, tcpxo)
        assert p.algorithm in ("ring", "tree") and p.protocol == "simple"
    # a TCP network step costs an extra hop latency on every network step
    r_ib = cl.predict_collective("allreduce", 8, ib, "ring")
    r_tx = cl.predict_collective("allreduce", 8, cl.cluster("H100", nodes=2, nic="RoCE-400"),
                                 "ring")
    assert r_tx.latency_s == pytest.approx(r_ib.latency_s)
    ring_tx = cl.predict_collective("allreduce", 8, tcpxo, "ring")
    ring_ib = cl.predict_collective("allreduce", 8, cl.cluster("H100", nodes=2, nic="NDR"),
                                    "ring")
    assert ring_tx.latency_s - ring_ib.latency_s == pytest.approx(
        4 * hw.network_hop_s("TCPXO") + 0.0, rel=0.3)


# --- pipelined multi-node algorithms -------------------------------------------------
def test_two_node_trees_beat_the_ring_bound_and_overlap_their_phases():
    c = cl.cluster("H100", nodes=2, nic="TCPXO-200")
    big = 8 * 2**30
    ring = cl.predict_collective("allreduce", big, c, "ring")
    tree = cl.predict_collective("allreduce", big, c, "tree")
    net = c.inter_bw_bytes_per_s()
    # a ring is held to the node's network rate in busbw ...
    assert ring.busbw_bytes_per_s < net
    # ... a 2-node tree sends S per node, so algbw approaches the network rate
    assert tree.busbw_bytes_per_s > 1.5 * net
    assert tree.algbw_bytes_per_s < net


def test_hierarchical_time_is_the_slower_phase_not_the_sum():
    c = cl.cluster("H100", nodes=4, nic="NDR")
    s = 4 * 2**30
    p = cl.predict_collective("allreduce", s, c, "hierarchical")
    g, n = 8, 4
    b_i = c.intra_bw_bytes_per_s() * hw.calibration("simple_efficiency")
    b_x = c.inter_bw_bytes_per_s() / g * hw.calibration("simple_efficiency")
    t_i = 2 * (g - 1) / g * s / b_i
    t_x = 2 * (n - 1) / n * (s / g) / b_x
    assert p.transfer_s == pytest.approx(max(t_i, t_x))
    assert p.transfer_s < t_i + t_x


def test_nvls_tree_halves_the_network_share_beyond_two_nodes():
    two = cl.cluster("H100", nodes=2, nic="NDR", nics_per_node=2)
    four = cl.cluster("H100", nodes=4, nic="NDR", nics_per_node=2)
    s = 8 * 2**30
    a2 = cl.predict_collective("allreduce", s, two, "nvls").algbw_bytes_per_s
    a4 = cl.predict_collective("allreduce", s, four, "nvls").algbw_bytes_per_s
    assert a2 / a4 == pytest.approx(2, rel=0.05)


# --- held-out validation data ----------------------------------------------------------
def test_validation_csv_has_a_source_a_split_and_a_cluster_per_row():
    rows = predict.validation_rows()
    assert len(rows) >= 60
    for r in rows:
        assert r["split"] in ("fit", "heldout")
        assert r["source"].strip() and r["cluster"].strip()
        assert r["n_bytes"] > 0 and r["measured_busbw"] > 0
    fit = {r["system"] for r in rows if r["split"] == "fit"}
    held = {r["system"] for r in rows if r["split"] == "heldout"}
    assert fit and len(held) >= 6 and not fit & held


@pytest.mark.parametrize("system, limit", [
    ("HGX H200 (8 GPUs, NVSwitch)", 0.05),
    ("HGX A100 x2 nodes, 4x HDR InfiniBand", 0.10),
    ("AWS p4d(n).24xlarge (8 A100, 4x 100G EFA)", 0.10),
])
def test_held_out_systems_the_model_covers_are_predicted(system, limit):
    errs = predict.validation_errors()
    assert errs[system]["median_big"] < limit


def test_two_node_tcpxo_plateau_is_predicted_within_fifteen_percent():
    rows = [r for r in predict.validation_rows(split="heldout")
            if "TCPXO" in r["system"] and r["n_bytes"] >= 2**30]
    assert len(rows) == 4
    assert max(abs(r["rel_error"]) for r in rows) < 0.15


def test_cluster_from_spec_rejects_bad_specs():
    with pytest.raises(ValueError, match="spec"):
        predict.cluster_from_spec("H100")
    with pytest.raises(ValueError, match="topo="):
        predict.cluster_from_spec("gpu=A100;topo=nccl-tests-178.txt;fabric=pcie")


# --- command line with a topology dump --------------------------------------------------
def test_cli_reads_a_topology_dump(capsys):
    path = str(predict.validation_data_dir() / "topo" / "nccl-tests-178.txt")
    rc = course_cli(["predict", "allreduce", "--gpu", "A100", "--topo", path, "--gpus", "0,1,2",
                       "--min", "1G", "--max", "1G", "--json"])
    rec = __import__("json").loads(capsys.readouterr().out)[0]
    assert rc == 0 and rec["n_ranks"] == 3
    assert rec["bw_bytes_per_s"] == pytest.approx(24e9 * hw.calibration("simple_efficiency"))
    for argv, word in ((["--gpus", "0,x"], "--gpus"), ([], "cpu"),
                       (["--topo", "/nonexistent"], "--topo")):
        args = ["allreduce", "--gpu", "A100", "--topo", path] + argv
        assert course_cli(["predict", *args]) == 2
        assert word in capsys.readouterr().err


def test_ll128_needs_the_nic_on_the_gpus_switch_across_nodes():
    # tuning.cc: LL128 only when the NIC path is PXB or better (PXN on Hopper)
    near = cl.cluster("A100", nodes=2, nic="HDR", nics_per_node=4)
    far = cl.cluster("A100", nodes=2, nic="HDR", nics_per_node=4, nic_path="host",
                     cpu="amd-zen3")
    assert "ring/ll128" in cl.predict_collective("allreduce", MIB, near).candidates
    assert "ring/ll128" not in cl.predict_collective("allreduce", MIB, far).candidates
    hopper = cl.cluster("H100", nodes=2, nic="NDR", nic_path="host", cpu="intel-spr")
    assert "ring/ll128" in cl.predict_collective("allreduce", MIB, hopper).candidates


# --- second pass: kernel launches, network steps, NVLS relay ---------------------------
def test_launch_cost_scales_with_the_gpus_one_thread_drives():
    c = cl.cluster("H100", nodes=2, nic="NDR")
    base = cl.predict_collective("allreduce", 8, c)
    one = cl.predict_collective("allreduce", 8, c, launch_gpus=1)
    eight = cl.predict_collective("allreduce", 8, c, launch_gpus=8)
    assert eight.time_s == pytest.approx(base.time_s)  # the default is the calibration's -g 8
    per_gpu = hw.calibration("launch_s") / hw.calibration("launch_gpus")
    assert base.time_s - one.time_s == pytest.approx(7 * per_gpu)
    assert one.launch_s == pytest.approx(per_gpu) and per_gpu == pytest.approx(3.5e-6)
    for bad in (0, -1, 2.5, "8"):
        with pytest.raises((ValueError, TypeError), match="launch_gpus"):
            cl.predict_collective("allreduce", 8, c, launch_gpus=bad)


def test_validation_rows_use_the_runs_own_launch_count():
    rows = [r for r in predict.validation_rows(split="heldout")
            if r["system"].startswith("DGX-2") and r["n_bytes"] == 8]
    (r,) = rows
    spec, g = cl.clusters.split_launch_gpus(r["cluster"])
    assert g == 12 and "launch_gpus" not in spec
    c = predict.cluster_from_spec(spec)
    p = cl.predict_collective("allreduce", 8, c, launch_gpus=12)
    assert r["predicted_busbw"] == pytest.approx(p.busbw_bytes_per_s)


def test_network_step_is_nccls_buffer_step_on_two_channels_per_nic():
    ndr = cl.cluster("H100", nodes=2, nic="NDR")
    assert ndr.net_chunk_bytes() == 4 * 2**20 / 8 * 2 * 8  # 8 MiB
    efa4 = cl.cluster("A100", nodes=2, nic="EFA-100", nics_per_node=4)
    assert efa4.net_chunk_bytes() == 4 * 2**20 / 8 * 2 * 4
    tcpxo = cl.cluster("H100", nodes=2, nic="TCPXO-200")
    assert tcpxo.net_chunk_bytes() == 8 * 2**20 / 8 * 2 * 8  # the TCPXO profile's 8 MiB buffer
    assert cl.cluster("H100").net_chunk_bytes() == 0.0
    # the tree's fill grows with the network step until S/g reaches it
    fills = [predict._tree("allreduce", s, ndr, "simple")[2] for s in (2**24, 2**26, 2**30)]
    assert fills[0] < fills[1] == pytest.approx(fills[2])


def test_nvls_tree_relays_the_network_through_the_nic_gpus_port():
    # with one NIC per GPU each port carries S/8 more; with 2 nodes k = 1
    c = cl.cluster("H100", nodes=2, nic="NDR")
    lat, tr, fill, b = predict._nvls_tree("allreduce", 2**30, c)
    b_in = c.intra_bw_bytes_per_s() * hw.calibration("nvls_efficiency")
    assert b == pytest.approx(b_in / (1 + 1 / 8))


def test_cli_takes_the_launch_count(capsys):
    args = ["predict", "allreduce", "--nodes", "2", "--nic", "NDR", "--min", "8", "--max", "8",
            "--json"]
    assert course_cli(args + ["--launch-gpus", "1"]) == 0
    one = __import__("json").loads(capsys.readouterr().out)[0]
    assert course_cli(args) == 0
    default = __import__("json").loads(capsys.readouterr().out)[0]
    assert default["time_s"] - one["time_s"] == pytest.approx(7 * 3.5e-6)
    assert course_cli(args + ["--launch-gpus", "0"]) == 2
    assert "launch_gpus" in capsys.readouterr().err
