"""Fuzz the public API: any input may be refused, but only with ValueError or
TypeError (naming the parameter) -- nothing else may escape."""

import inspect
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import course_lib as cl
from course_lib import analytic, hardware, predict, scenarios, sim, topology, traffic, units

MODULES = [units, hardware, topology, analytic, traffic, predict, scenarios, sim]
SKIP = {"all_facts", "catalog_table", "gpu_names", "nic_names", "system_names",
        "static_mode"}

NAMES = (list(cl.GPUS) + list(cl.NICS) + list(cl.SYSTEMS) + list(analytic.COLLECTIVES)
         + list(analytic.ALGORITHMS) + ["ring", "nvswitch", "links", "gpu-hops", "400 Gb/s",
                                        "1 GiB", "2 us", "", "bogus"])
SMALL_TOPOS = [topology.ring_topology(4), topology.nvswitch_topology(4),
               topology.two_level_topology(2, 2), topology.hybrid_cube_mesh_topology()]

values = st.one_of(
    st.integers(min_value=-3, max_value=24),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.floats(min_value=-1e12, max_value=1e13),
    st.sampled_from(NAMES),
    st.text(max_size=6),
    st.none(),
    st.booleans(),
    st.sampled_from(SMALL_TOPOS),
    st.sampled_from([predict.cluster("H100"), predict.cluster("A100", gpus_per_node=4, fabric="mesh"),
                     predict.cluster("H100", nodes=2, nic="NDR")]),
    st.lists(st.integers(0, 3), max_size=3),
)


def public_functions():
    for mod in MODULES:
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and name not in SKIP and not name.startswith("_"):
                yield f"{mod.__name__}.{name}", obj


FUNCS = list(public_functions())


def test_there_is_a_public_api_to_fuzz():
    assert len(FUNCS) > 40


@pytest.mark.parametrize("qualname, func", FUNCS, ids=[q for q, _ in FUNCS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_only_value_or_type_errors_escape(qualname, func, data):
    sig = inspect.signature(func)
    args = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is not p.empty and data.draw(st.booleans()):
            break  # leave the remaining optional parameters at their defaults
        args.append(data.draw(values, label=p.name))
    try:
        result = func(*args)
    except (ValueError, TypeError) as exc:
        assert str(exc), f"{qualname} raised an empty message"
        return
    if isinstance(result, float):
        assert not math.isnan(result), f"{qualname}{tuple(args)} returned NaN"
