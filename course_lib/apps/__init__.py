"""The apps: programs built on top of the library's layers.

* :mod:`course_lib.apps.cli` -- the one command line, ``python -m course_lib
  COMMAND`` (predict, lab, doctor, catalog, site);
* :mod:`course_lib.apps.doctor` -- is this machine ready for the course?
  (``from course_lib import doctor; doctor.run()`` still works);
* :mod:`course_lib.apps.site` -- the static HTML edition of the chapters.

Nothing in the model layers imports these; ``import course_lib`` does not
load them.
"""
