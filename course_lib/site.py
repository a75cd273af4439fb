"""Old name of the static edition's builder, which lives in
:mod:`course_lib.apps.site` (the apps sit on top of the model layers).

``python -m course_lib.site OUTDIR`` (``make site``) and ``from course_lib
import site`` keep working: every name reads through to the apps module."""

import sys

from course_lib.apps import site as _site
from course_lib.apps.site import *  # noqa: F401,F403


def __getattr__(name):  # the private names too
    return getattr(_site, name)


if __name__ == "__main__":  # python -m course_lib.site OUTDIR
    sys.exit(_site.main())
