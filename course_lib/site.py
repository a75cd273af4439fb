"""The static edition lives in :mod:`course_lib.apps.site` (apps sit on top of
the model layers).  This name stays so that ``python -m course_lib.site
OUTDIR`` and ``from course_lib import site`` keep working: it *is* that module
(the same object)."""

import sys

from course_lib.apps import site as _site

if __name__ == "__main__":  # python -m course_lib.site OUTDIR
    sys.exit(_site.main())
sys.modules[__name__] = _site
