"""Run several nbgrader steps in one process (saves an interpreter start per step).

``python -m autograder._batch generate A [A ...]``, run in the course directory;
prints one JSON line per assignment: ``{"assignment", "success", "error"}``.
Used by :meth:`autograder.pipeline.Course.release`.
"""

from __future__ import annotations

import json
import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verb, assignments = argv[0], argv[1:]
    if verb != "generate":
        print(f"unknown verb {verb!r}", file=sys.stderr)
        return 2
    from nbgrader.apps import NbGrader
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    app = NbGrader()
    app.load_config_file()
    coursedir = CourseDirectory(config=app.config)
    api = NbGraderAPI(coursedir, config=app.config)
    ok = True
    for a in assignments:
        result = api.generate_assignment(a, force=True, create=True)
        ok &= bool(result["success"])
        print(json.dumps({"assignment": a, "success": bool(result["success"]),
                          "error": result.get("error", ""), "log": result.get("log", "")[-4000:]}),
              flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
