"""Old name of the environment doctor, which lives in
:mod:`course_lib.apps.doctor` (the apps sit on top of the model layers).

``from course_lib import doctor; doctor.run()`` and ``python -m
course_lib.doctor`` keep working: every name reads through to the apps
module.  (To replace one of its functions, e.g. in a test, patch
``course_lib.apps.doctor``.)"""

import sys

from course_lib.apps import doctor as _doctor
from course_lib.apps.doctor import *  # noqa: F401,F403


def __getattr__(name):  # the private names too: doctor._REPO, doctor.check_python...
    return getattr(_doctor, name)


if __name__ == "__main__":  # python -m course_lib.doctor
    sys.exit(_doctor.main())
