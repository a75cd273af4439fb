"""Drawings of the city: the machine as a map, routes on it, collectives you watch.

Every picture is SVG text made from the same objects the models use (a
:class:`course_lib.clusters.Cluster`, a :mod:`course_lib.topology` graph, a
schedule), so a drawing cannot disagree with a number.  One visual language
for the whole course lives in :mod:`course_lib.draw.style` (a colour and a
city name per road kind); :mod:`course_lib.draw.svg` is the small canvas the
renderers draw on and :class:`Diagram`, what a notebook cell displays.

Layer: above ``plots`` (it may read the models: units, hardware, topology,
analytic, clusters, predict, sim), below ``widgets``.
"""

from .style import ROADS, PLACES, road_colour  # noqa: F401
from .svg import Canvas, Diagram, animate  # noqa: F401

__all__ = ["Canvas", "Diagram", "animate", "ROADS", "PLACES", "road_colour"]
