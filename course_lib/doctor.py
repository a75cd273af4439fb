"""The environment doctor lives in :mod:`course_lib.apps.doctor` (apps sit on
top of the model layers).  This name stays so that
``from course_lib import doctor; doctor.run()`` keeps working: it *is* that
module (the same object, so settings and test hooks apply to both names)."""

import sys

from course_lib.apps import doctor as _doctor

if __name__ == "__main__":  # python -m course_lib.doctor
    sys.exit(_doctor.main())
sys.modules[__name__] = _doctor
