"""Drawings of the city: the machine as a map, routes on it, collectives you watch.

Every picture is SVG text made from the same objects the models use (a
:class:`course_lib.clusters.Cluster`, a :mod:`course_lib.topology` graph, a
schedule), so a drawing cannot disagree with a number.  One visual language
for the whole course lives in :mod:`course_lib.draw.style` (a colour and a
city name per road kind) and :mod:`course_lib.draw.glyphs` (one glyph per
thing: every GPU is the city's factory, :func:`~course_lib.draw.glyphs.gpu_glyph`,
every buffer numbered chunk boxes); :mod:`course_lib.draw.svg` is the small
canvas the renderers draw on and :class:`Diagram`, what a notebook cell displays.

Layer: above ``plots`` (it may read the models: units, hardware, topology,
analytic, clusters, predict, sim), below ``widgets``.
"""

from .style import ROADS, PLACES, road_colour  # noqa: F401
from .svg import Canvas, Diagram, animate  # noqa: F401
from .glyphs import chunk_boxes, gpu_glyph  # noqa: F401

__all__ = ["Canvas", "Diagram", "animate", "ROADS", "PLACES", "road_colour", "gpu_glyph",
           "chunk_boxes"]

# the city map and routes on it (chapters 0-6)
from .city import CITY_ROUTES, city_map, copy_path, network_path, route_legs  # noqa: F401,E402
from .topology import topology_gallery, topology_map  # noqa: F401,E402

__all__ += ["city_map", "copy_path", "network_path", "route_legs", "CITY_ROUTES",
            "topology_map", "topology_gallery"]

# collectives you watch and a step's timeline (chapters 7-11)
from . import collectives, timeline  # noqa: E402,F401

__all__ += ["collectives", "timeline"]
