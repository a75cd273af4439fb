# nbgrader configuration for Interconnect City (nbgrader 0.9.6).
#
# The course directory (nbgrader's root; default ./course/, git-ignored) holds
# copies of the repository's solutions/ and exercises/ under the same names, the
# gradebook and the student folders.  `python -m autograder` writes a two-line
# course/nbgrader_config.py that loads this file, so nbgrader's own commands and
# the formgrader, run inside course/, see the same settings.
#
# Knobs the pipeline passes through the environment (all optional):
#   INTERCONNECT_COURSE_DIR          the course directory (default: the config's folder)
#   INTERCONNECT_CELL_TIMEOUT_S      per-cell time-out                 (default 30)
#   INTERCONNECT_NOTEBOOK_TIMEOUT_S  whole-notebook budget             (default 300)
#   INTERCONNECT_KERNEL_MEMORY_BYTES sandbox address-space limit       (default 2 GiB)
#   INTERCONNECT_INCIDENT_LOG        JSON-lines file for incidents (set by the pipeline)
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_repo = _here if os.path.isdir(os.path.join(_here, "autograder")) else os.path.dirname(_here)
if _repo not in sys.path:
    sys.path.insert(0, _repo)

from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    CheckCellMetadata, ClearOutput, DeduplicateIds, IgnorePattern, LimitOutput,
    OverwriteCells, OverwriteKernelspec, SaveAutoGrades, AssignLatePenalties)

from autograder import COURSE_ID  # noqa: E402
from autograder.guard import HideHiddenTests, RestoreCellMetadata, SandboxedGrading  # noqa: E402
from autograder.sanitize import (  # noqa: E402
    SanitizeFeedback, SanitizeStudentContent, StripHiddenFromOutputs)
from nbgrader.preprocessors import GetGrades  # noqa: E402
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402

c = get_config()  # noqa: F821  (provided by traitlets when it loads this file)

_course = os.environ.get("INTERCONNECT_COURSE_DIR") or os.path.join(_repo, "course")

# --- where things are -------------------------------------------------------
c.CourseDirectory.course_id = COURSE_ID
c.CourseDirectory.root = _course
c.CourseDirectory.source_directory = "solutions"      # a copy of the repo's solutions/
c.CourseDirectory.release_directory = "exercises"     # normalised into the repo's exercises/
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(_course, "gradebook.db")
c.Exchange.root = os.path.join(_course, "exchange")
c.Exchange.path_includes_course = True
# Submissions may only be notebooks; nothing else is copied into autograded/.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback",
                            "*.so", "*.pth", "sitecustomize.py", "usercustomize.py"]
c.CourseDirectory.max_file_size = 2000  # kB

# --- releasing ---------------------------------------------------------------
c.GenerateAssignment.create_assignment = True
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.enforce_metadata = True

# --- collecting from an LMS zip ------------------------------------------------
# Files inside the zip are named <student_id>_<notebook>.ipynb, or sit in a
# folder per student: <student_id>/<notebook>.ipynb (see docs/grading.md).
c.ZipCollectApp.collector_plugin = "nbgrader.plugins.zipcollect.FileNameCollectorPlugin"
c.FileNameCollectorPlugin.named_regexp = (
    r"^(?:.*/)?(?P<student_id>[A-Za-z0-9.-]+)(?:/|_)(?P<file_id>[A-Za-z0-9_]+\.ipynb)$")
c.ZipCollectApp.strict = False

# --- autograding: the defences ------------------------------------------------
c.OverwriteCells.add_missing_cells = True          # deleted test cells come back
c.Autograde.sanitize_preprocessors = [
    ClearOutput,              # spoofed outputs ("All tests passed!") are wiped first
    DeduplicateIds,           # a copied grade_id cannot shadow the real test cell
    OverwriteKernelspec,      # the kernel is the instructor's, not the submission's
    RestoreCellMetadata,      # grade/points/locked/checksum come from the gradebook
    OverwriteCells,           # locked cells' source from the gradebook (hidden tests)
    CheckCellMetadata,
]
c.Autograde.autograde_preprocessors = [
    SandboxedGrading,         # the notebook runs in bubblewrap; the tests are judged here
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
    SanitizeStudentContent,   # last: autograded/ holds no script, handler or remote load
]
c.SandboxedGrading.timeout = int(os.environ.get("INTERCONNECT_CELL_TIMEOUT_S", "30"))
c.SandboxedGrading.notebook_timeout = int(os.environ.get("INTERCONNECT_NOTEBOOK_TIMEOUT_S", "300"))
c.SandboxedGrading.memory_limit_bytes = int(
    os.environ.get("INTERCONNECT_KERNEL_MEMORY_BYTES", str(2 * 2**30)))
c.SandboxedGrading.cpu_limit_s = 600
c.SandboxedGrading.max_output_bytes = 1_000_000   # a 200 MB print or a 50 MB image is cut
# The Validate button (students' own machines) runs nbgrader's plain Execute:
c.Execute.timeout = int(os.environ.get("INTERCONNECT_CELL_TIMEOUT_S", "30"))
c.Execute.interrupt_on_timeout = True
c.Execute.raise_on_iopub_timeout = False
c.Execute.iopub_timeout = 10
c.Execute.startup_timeout = 60
c.LimitOutput.max_lines = 200
c.LimitOutput.max_traceback = 60
# The same settings apply to students' Validate button: a hang there times out too.
c.Validator.validate_all = True

# --- feedback ------------------------------------------------------------------
c.GenerateFeedback.force = False
c.GenerateFeedback.preprocessors = [GetGrades, StripHiddenFromOutputs, HideHiddenTests,
                                    SanitizeFeedback, CSSHTMLHeaderPreprocessor]

# --- pages: feedback and the formgrader's submission view ---------------------------
# Both render autograded/ notebooks (already sanitised, above) with nbconvert's
# HTMLExporter; a second layer for notebooks autograded before: nbconvert's own
# sanitising (no JavaScript or widget outputs) with the course's cleaner.
c.HTMLExporter.sanitize_html = True
c.HTMLExporter.filters = {"clean_html": "autograder.sanitize.clean_html"}
