"""Interconnect City's grading pipeline: nbgrader 0.9.6 with the traps handled.

One entry point, ``python -m autograder <verb>``:

``release``   generate ``exercises/`` from ``solutions/`` (deterministic; ``--check``
              compares with what is committed)
``collect``   bring submissions into the course directory, from an LMS zip
              (nbgrader's ``zip_collect``) or from the nbgrader exchange
``autograde`` grade every submission in one nbgrader batch per assignment:
              each notebook runs in its own bubblewrap sandbox
              (:mod:`autograder.sandbox`), the tests are judged by an
              unprivileged process of their own (:mod:`autograder.judge`) on
              answers that cross as data only (:mod:`autograder.wire`); list who
              needs a human (dead kernel, time-out, suspicious code)
``feedback``  generate HTML feedback (and release it to the exchange if used)
``export``    write the gradebook to CSV
``all``       release, collect, autograde, feedback, export

The course directory (default ``./course/``, git-ignored) is nbgrader's root:
it holds copies of ``solutions/`` and ``exercises/`` under the same names, the
gradebook and the student folders.  The instructor's guide is
``docs/grading.md``.
"""

from __future__ import annotations

import os

__all__ = ["COURSE_ID", "REPO_ROOT", "DEFAULT_COURSE_DIR", "ASSIGNMENTS",
           "STUDENT_DISABLED_EXTENSIONS", "STUDENT_DISABLED_SERVER_EXTENSIONS"]

#: nbgrader's course id.
COURSE_ID = "interconnect-city"

#: The repository root (the folder that holds ``solutions/`` and ``course_lib/``).
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Where the pipeline keeps the gradebook and student folders by default: ``./course``
#: in the directory it is run from (git-ignored when that is the repository root).
DEFAULT_COURSE_DIR = "course"

#: The graded assignments, in teaching order (folder names under ``solutions/``).
ASSIGNMENTS = ("ring_allreduce", "hop_counts", "scaling_limits", "pinned_vs_pageable")

#: JupyterLab plugins of nbgrader that students on Binder must not see: the
#: authoring and instructor tools, and the exchange-based lists (Binder has no
#: exchange).  ``@jupyter/nbgrader:validate-assignment`` stays enabled.
#: Use with ``jupyter labextension disable <name>``.
STUDENT_DISABLED_EXTENSIONS = (
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:course-list",
    "@jupyter/nbgrader:assignment-list",
    "@jupyter/nbgrader:menu",
)

#: nbgrader's Jupyter server extensions to switch off for students
#: (``jupyter server extension disable <name>``); ``validate_assignment`` stays.
STUDENT_DISABLED_SERVER_EXTENSIONS = (
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.course_list",
    "nbgrader.server_extensions.assignment_list",
)


def assignments_in(solutions_dir: str | None = None) -> list[str]:
    """The assignment folders present under ``solutions_dir``, in teaching order."""
    root = solutions_dir or os.path.join(REPO_ROOT, "solutions")
    present = sorted(d for d in os.listdir(root)
                     if os.path.isdir(os.path.join(root, d)) and not d.startswith("."))
    order = {a: i for i, a in enumerate(ASSIGNMENTS)}
    return sorted(present, key=lambda a: (order.get(a, len(order)), a))
