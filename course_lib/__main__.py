"""``python -m course_lib COMMAND [options]``: see :mod:`course_lib.apps.cli`."""

import sys

from course_lib.apps.cli import main

if __name__ == "__main__":
    sys.exit(main())
