"""One drawing style per thing: every GPU is the city's factory, every buffer numbered chunk boxes.

Every drawing that shows a GPU (the city map and its close-ups, chapter 6's
road maps, the collectives of chapters 7-11, and whatever the explorers
draw) is parsed, and each ``ic-gpu`` group is checked against the factory of
the city map (chapter 0): a ``<rect class="ic-gpu-body">`` first, in the
factory's fill, outlined in the factory's dark green (or the highlight's
magenta), corners of 6 px or a fifth of the short side on small glyphs; no
circle; its words inside it and clear of each other.  Every buffer
(``ic-chunk``) is a chunk box: the same grey box outlined in its chunk's
colour (black when it just received data), its count written in it where it
is not complete -- NVLS's buffers included, S cut into n chunks as on the
ring.
"""

import xml.etree.ElementTree as ET

import pytest

import course_lib as cl
from course_lib import topology as T
from course_lib.draw import collectives as C
from course_lib.draw.style import CHUNK_COLOURS, PLACES
from course_lib.draw.svg import text_box

SVG = "{http://www.w3.org/2000/svg}"
FACTORY_FILL = PLACES["gpu"][0]
FACTORY_STROKE = "#2f6f57"          # the city map's factory outline
HIGHLIGHT = "#c2185b"               # a chosen factory, a route's end
RECEIVED = "#222"                   # a chunk box that just received data
CLU = cl.cluster("H100", nodes=2, nic="NDR")

DRAWINGS = {
    "city_map": lambda: cl.draw.city_map(CLU, route="rdma", pair=(0, 8), highlight=[3]),
    "city_map pcie": lambda: cl.draw.city_map(cl.cluster("H100", 4, fabric="pcie")),
    "city_map cube-mesh": lambda: cl.draw.city_map(cl.cluster("V100", 8, fabric="cube-mesh")),
    "copy_path pageable": lambda: cl.draw.copy_path("pageable"),
    "copy_path pinned": lambda: cl.draw.copy_path("pinned", gpu=None, pcie_gen=4),
    "network_path rdma gpu": lambda: cl.draw.network_path("rdma", memory="gpu"),
    "network_path tcp": lambda: cl.draw.network_path("tcp"),
    "topology ring": lambda: cl.draw.topology_map(T.ring_topology(8), highlight_pair=(0, 4),
                                                  hops_from=0),
    "topology two-level": lambda: cl.draw.topology_map(T.two_level_topology(2, 8),
                                                       highlight_pair=(0, 9)),
    "topology torus": lambda: cl.draw.topology_map(T.torus_2d_topology(4, 4)),
    "topology cube-mesh": lambda: cl.draw.topology_map(T.hybrid_cube_mesh_topology()),
    "topology nvswitch": lambda: cl.draw.topology_map(T.nvswitch_topology(8)),
    "topology bridge": lambda: cl.draw.topology_map(T.bridge_topology()),
    "topology pcie": lambda: cl.draw.topology_map(T.pcie_topology(4), highlight_pair=(0, 3)),
    "topology_gallery": lambda: cl.draw.topology_gallery(
        {"ring": T.ring_topology(6), "mesh": T.fully_connected_topology(4)}),
    "ring 4": lambda: C.ring_allreduce(4, step=2),
    "ring 12": lambda: C.ring_allreduce(12, step=5),
    "ring over nodes": lambda: C.ring_allreduce(8, step=3, gpus_per_node=4, road="pcie"),
    "ring animated": lambda: C.ring_allreduce(3),
    "collective_effect": lambda: C.collective_effect("reduce", 6, root=2),
    "tree_chain": lambda: C.tree_chain(8, step=3),
    "nvls 8": lambda: C.nvls(8, step=1),
    "nvls 12 of 4 nodes": lambda: C.nvls(12, step=3, nodes=4),
    "hierarchical": lambda: C.hierarchical(2, 4, step=2, cluster=CLU),
    "hierarchical 4x8": lambda: C.hierarchical(4, 8, step=1),
    "two_way_tracks": lambda: C.two_way_tracks("H100"),
}


def _classes(e):
    return (e.get("class") or "").split()


def _children(e):
    return [c for c in e if c.tag != f"{SVG}title"]


def _text_boxes(group):
    out = []
    for t in group.iter(f"{SVG}text"):
        s = "".join(t.itertext())
        if s.strip():
            out.append((text_box(float(t.get("x")), float(t.get("y")), s,
                                 float(t.get("font-size") or 12),
                                 t.get("text-anchor") or "start",
                                 bold=t.get("font-weight") == "bold"), s))
    return out


def gpu_problems(svg: str) -> list[str]:
    """How the GPUs of one drawing differ from the city's factory."""
    root = ET.fromstring(svg)
    problems, n = [], 0
    for g in root.iter(f"{SVG}g"):
        if "ic-gpu" not in _classes(g):
            continue
        n += 1
        who = f"GPU {g.get('data-rank')}"
        kids = _children(g)
        body = kids[0] if kids else None
        if body is None or body.tag != f"{SVG}rect" or "ic-gpu-body" not in _classes(body):
            problems.append(f"{who}: not drawn as the factory box (first element "
                            f"{None if body is None else body.tag.replace(SVG, '')})")
            continue
        if list(g.iter(f"{SVG}circle")):
            problems.append(f"{who}: a circle in the glyph")
        w, h = float(body.get("width")), float(body.get("height"))
        x, y = float(body.get("x")), float(body.get("y"))
        if body.get("fill") != FACTORY_FILL:
            problems.append(f"{who}: fill {body.get('fill')}, the factory's is {FACTORY_FILL}")
        if body.get("stroke") not in (FACTORY_STROKE, HIGHLIGHT):
            problems.append(f"{who}: outline {body.get('stroke')}, the factory's is "
                            f"{FACTORY_STROKE}")
        rx = float(body.get("rx") or 0)
        if abs(rx - min(6.0, min(w, h) / 5)) > 0.01:
            problems.append(f"{who}: corner {rx:g} px on a {w:g} x {h:g} box")
        words = _text_boxes(g)
        if not any(t.get("font-weight") == "bold" for t in g.iter(f"{SVG}text")):
            problems.append(f"{who}: no name in bold")
        for (x0, y0, x1, y1), s in words:
            if x0 < x - 1 or x1 > x + w + 1 or y0 < y - 1 or y1 > y + h + 1:
                problems.append(f"{who}: {s!r} leaves its factory")
        for i, ((a0, b0, a1, b1), s) in enumerate(words):
            for (c0, d0, c1, d1), t in words[:i]:
                if min(a1, c1) - max(a0, c0) > 0.5 and min(b1, d1) - max(b0, d0) > 0.5:
                    problems.append(f"{who}: {s!r} covers {t!r}")
    # nothing else in the drawing is coloured like a factory
    inside = {id(e) for g in root.iter(f"{SVG}g") if "ic-gpu" in _classes(g)
              for e in g.iter()}
    for e in root.iter():
        if e.get("fill") == FACTORY_FILL and id(e) not in inside:
            problems.append(f"a {e.tag.replace(SVG, '')} in the factory's colour outside "
                            "any GPU glyph")
    if n == 0:
        problems.append("no GPU drawn")
    return problems


@pytest.mark.parametrize("name", list(DRAWINGS))
def test_every_gpu_is_the_citys_factory(name):
    assert gpu_problems(DRAWINGS[name]().svg) == []


def test_the_explorers_draw_gpus_as_factories_too():
    from course_lib.explorers import iter_explorers

    seen = 0
    for name, factory in iter_explorers():
        ex = factory()
        if ex.diagram is None:
            continue
        svg = ex.svg(ex.update())
        if not svg or "ic-gpu" not in svg:
            continue
        seen += 1
        assert gpu_problems(svg) == [], name
    assert seen >= 3            # chapter 6's road map, chapter 7's collectives, ...


def chunk_problems(svg: str) -> list[str]:
    """How the buffers of one drawing differ from the ring's numbered chunk boxes."""
    root = ET.fromstring(svg)
    problems = []
    for e in root.iter(f"{SVG}g"):
        if "ic-chunk" not in _classes(e):
            continue
        k, have = int(e.get("data-chunk")), int(e.get("data-have"))
        box = _children(e)[0]
        where = f"rank {e.get('data-rank')} chunk {k}"
        if box.tag != f"{SVG}rect" or box.get("fill") != "#f4f4f4" or box.get("rx") != "2":
            problems.append(f"{where}: not a chunk box")
            continue
        if box.get("stroke") not in (CHUNK_COLOURS[k % len(CHUNK_COLOURS)], RECEIVED):
            problems.append(f"{where}: outlined {box.get('stroke')}, not its chunk's colour")
        words = ["".join(t.itertext()) for t in e.iter(f"{SVG}text")]
        w = float(box.get("width"))
        if have and w >= 14 and words not in (["✓"], [str(have)]):
            problems.append(f"{where}: holds {have} but reads {words}")
    return problems


@pytest.mark.parametrize("n", [2, 4, 8, 12])
@pytest.mark.parametrize("step", [0, 1, 3])
def test_nvls_buffers_are_the_rings_chunk_boxes(n, step):
    root = ET.fromstring(C.nvls(n, step=step).svg)
    assert chunk_problems(C.nvls(n, step=step).svg) == []
    per = {}
    for e in root.iter(f"{SVG}g"):
        if "ic-chunk" in _classes(e):
            per.setdefault(e.get("data-rank"), []).append(int(e.get("data-chunk")))
    # every GPU's buffer and the switch's: S cut into n chunks, as on the ring
    assert set(per) == {str(r) for r in range(n)} | {"switch"}
    assert all(sorted(ks) == list(range(n)) for ks in per.values())


@pytest.mark.parametrize("make", [lambda: C.ring_allreduce(5, step=3),
                                  lambda: C.hierarchical(2, 4, step=1),
                                  lambda: C.collective_effect("allreduce", 4),
                                  lambda: C.tree_chain(6, step=2),
                                  lambda: C.double_binary_tree(8, step=2)],
                         ids=["ring", "hierarchical", "effect", "chain", "tree"])
def test_every_other_buffer_is_chunk_boxes_too(make):
    svg = make().svg
    assert "ic-chunk" in svg and chunk_problems(svg) == []
