"""The simulator and the predictor agree wherever both apply (issue 13).

The predictor is closed-form; the simulator plays the same schedules
transfer by transfer on the cluster's calibrated links.  Rings were checked
before (tests/test_sim.py); here the tree (NCCL's chains and double binary
tree) and the two-level AllReduce, pipelined, on single nodes and clusters.
"""

import itertools

import pytest

import course_lib as cl
from course_lib.sim import Network, ScheduleBuilder, run_events, schedules
from course_lib.topology import double_binary_tree, tree_sends_per_node

MIB = 2**20
CLUSTERS = {
    "h100": dict(gpu="H100"),
    "a100-mesh4": dict(gpu="A100", gpus_per_node=4, fabric="mesh"),
    "v100-dgx1": dict(gpu="V100", fabric="cube-mesh"),
    "a100-pcie4": dict(gpu="A100", gpus_per_node=4, fabric="pcie"),
    "h100x2-ndr": dict(gpu="H100", nodes=2, nic="NDR"),
    "h100x3-4gpu": dict(gpu="H100", gpus_per_node=4, nodes=3, nic="HDR", nics_per_node=2),
    "h100x4-ndr": dict(gpu="H100", nodes=4, nic="NDR"),
    "a100x2-4hdr": dict(gpu="A100", nodes=2, nic="HDR", nics_per_node=4),
    "a3mega": dict(gpu="H100", nodes=2, nic="TCPXO-200"),
    "p4d-efa": dict(gpu="A100", nodes=4, nic="EFA-100", nics_per_node=4),
}
MULTI = [k for k, v in CLUSTERS.items() if v.get("nodes", 1) > 1]


@pytest.mark.parametrize("size", [64 * 1024, MIB, 16 * MIB, 2**30])
@pytest.mark.parametrize("name", list(CLUSTERS))
def test_tree_sim_matches_predict(name, size):
    c = cl.cluster(**CLUSTERS[name])
    sim = cl.simulate_collective("allreduce", size, c, algorithm="tree")
    pred = cl.predict_collective("allreduce", size, c, algorithm="tree")
    assert sim.time_s == pytest.approx(pred.candidates["tree/simple"], rel=0.05)


@pytest.mark.parametrize("size", [64 * 1024, MIB, 16 * MIB, 2**30])
@pytest.mark.parametrize("name", MULTI)
def test_hierarchical_sim_matches_predict(name, size):
    c = cl.cluster(**CLUSTERS[name])
    sim = cl.simulate_collective("allreduce", size, c, algorithm="hierarchical")
    pred = cl.predict_collective("allreduce", size, c, algorithm="hierarchical")
    assert sim.time_s == pytest.approx(pred.time_s, rel=0.05)


def test_pipelined_hierarchical_is_the_slower_road_not_the_sum():
    # 1 GiB on 2x8 H100 over 8 NDR ports: NVLink carries 2(g-1)/g S per GPU,
    # the rails 2(m-1)/m S/g per NIC; pipelined, the time is near the larger
    c = cl.cluster("H100", nodes=2, nic="NDR")
    pipe = cl.simulate_collective("allreduce", 2**30, c, algorithm="hierarchical").time_s
    bare = cl.simulate_collective("allreduce", 2**30, c.topology(),
                                  algorithm="hierarchical").time_s  # phases in turn
    assert pipe < 0.8 * bare


def test_the_two_engines_play_the_tree_alike():
    # the fast (batched) engine shares a link only within a wavefront; the
    # event engine shares it exactly (max-min) -- on a small tree within 8 %
    c = cl.cluster("H100", gpus_per_node=4, nodes=2, nic="NDR")
    net = Network.from_cluster(c, tree=True)
    times = []
    for engine in ("batched", "events"):
        b = ScheduleBuilder()
        schedules.nccl_tree(b, net, 64 * MIB, 2, 4, 8, 16)
        sched = b.build()
        assert sched.batched
        tr = cl.sim.run(sched, net, engine)
        times.append(float(tr.rows["end_s"].max()))
    assert times[0] == pytest.approx(times[1], rel=0.08)


def test_tree_template_sends_what_the_predictor_counts():
    # per piece of each channel: g-1 chain sends up and g-1 down in every node,
    # one network send up and one down per non-root node of the channel's tree
    g, nodes, channels = 8, 4, 16
    src, dst, deps, role = schedules._nccl_tree_template(nodes, g, channels)
    assert len(src) == channels * (2 * nodes * (g - 1) + 2 * (nodes - 1))
    net_sends = {}
    for a, b in zip(src, dst):
        if a // g != b // g:
            net_sends[a // g] = net_sends.get(a // g, 0) + 1
    # the busiest node sends what tree_sends_per_node says (per byte of S)
    assert max(net_sends.values()) / channels == tree_sends_per_node(nodes)
    assert len(set(role)) == len(role)  # one queue per role


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 8, 16, 33])
def test_double_binary_tree_is_two_spanning_trees(n):
    trees = double_binary_tree(n)
    inner = [set(p for p in t.values() if p is not None) for t in trees]
    for t in trees:
        assert sorted(t) == list(range(n)) and list(t.values()).count(None) == 1
        for v in t:  # every member reaches the root
            seen = 0
            while t[v] is not None and seen <= n:
                v, seen = t[v], seen + 1
            assert seen <= n
    if n > 2 and n % 2 == 0:
        assert not inner[0] & inner[1]  # interior in at most one tree (mirror)
    sends = [0.0] * n
    for t in trees:
        for v, p in t.items():
            if p is not None:
                sends[v] += 0.5
                sends[p] += 0.5
    assert max(sends) == tree_sends_per_node(n)


def test_tree_sends_per_node_bad_input():
    with pytest.raises(ValueError, match="n"):
        tree_sends_per_node(0)
    assert list(itertools.islice((tree_sends_per_node(k) for k in (1, 2, 3, 4)), 4)) == \
        [0.0, 1.0, 1.5, 2.0]
