"""Reading the submission downloads of learning-management systems.

Each LMS names the files of a bulk download its own way.  :func:`parse_entry`
recognises, for one path inside the zip:

``canvas``       ``doejane_12345_67890_ring_allreduce.ipynb`` and
                 ``doejane_LATE_12345_67890_ring_allreduce-1.ipynb``:
                 name (lower case, no spaces), user id, submission id, the
                 original file name (Canvas adds ``-1``, ``-2`` to resubmissions)
``moodle``       ``Jane Doe_12345_assignsubmission_file_/ring_allreduce.ipynb``
                 ("download submissions in folders") or
                 ``Jane Doe_12345_assignsubmission_file_ring_allreduce.ipynb``:
                 full name, participant id, plugin, original file name
``blackboard``   ``Ring AllReduce_jdoe_attempt_2026-11-30-09-15-02_ring_allreduce.ipynb``
                 (and a ``.txt`` receipt per attempt): assignment, user name,
                 attempt time, original file name
``brightspace``  ``152-4471 - Jane Doe - Nov 30, 2026 915 AM - ring_allreduce.ipynb``
                 (and ``index.html``): submission ids, full name, time, file name
``tree``         ``jane/ring_allreduce/ring_allreduce.ipynb`` or ``jane/ring_allreduce.ipynb``
``flat``         ``jane_doe_ring_allreduce.ipynb`` or ``jane_doe_4711_ring_allreduce.ipynb``

The student id is the LMS's own id where it has one (Canvas user id, Moodle
participant id, Blackboard user name), so two people with one name are never
merged; the name is kept for the report.  A person is the pair (LMS, id):
:class:`StudentIds` gives the gradebook id, the bare id for the first LMS that
brings it (what the LMS's grade import expects) and ``<id>@<lms>`` for another
LMS that brings the same number; it remembers the pairs in the course
directory, so a later collect finds the same people.  The same (LMS, id) with
two different names is ``manual``: a human decides, nothing is superseded.  A file that belongs to a student
but is not named like the assignment's notebook is ``manual`` (a human
decides), never dropped.

>>> parse_entry("doejane_12345_67890_ring_allreduce.ipynb", ["ring_allreduce"]).student
'12345'
>>> parse_entry("mia/ring_allreduce/ring_allreduce.ipynb", ["ring_allreduce"], "ring_allreduce").student
'mia'
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field

__all__ = ["Entry", "parse_entry", "valid_student_id", "IGNORED", "StudentIds", "namespace"]

_ID_OK = re.compile(r"^[\w][\w .'@-]{0,63}$")
#: Files an LMS adds to a download that are not submissions (no report line needed).
IGNORED = re.compile(r"(^|/)(index\.html|__MACOSX/.*|\._.*|\.DS_Store|Thumbs\.db)$")

_CANVAS = re.compile(r"^(?P<name>[^_/]+?)(?P<late>_LATE)?_(?P<uid>\d+)_(?P<sub>\d+)_(?P<file>.+)$")
_MOODLE_DIR = re.compile(r"^(?P<name>.+)_(?P<uid>\d+)_assign(?:submission|feedback)_\w+?_?$")
_MOODLE_FLAT = re.compile(r"^(?P<name>.+?)_(?P<uid>\d+)_assignsubmission_(?:file|onlinetext)_(?P<file>.+)$")
_BLACKBOARD = re.compile(r"^(?P<assignment>.+)_(?P<user>[^_]+)_attempt_"
                         r"(?P<time>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<file>.+))?$")
_BRIGHTSPACE = re.compile(r"^(?P<sub>\d+-\d+) - (?P<name>.+?) ?- (?P<time>[A-Z][a-z]{2} \d{1,2}, "
                          r"\d{4} \d{3,4} [AP]M) - (?P<file>.+)$")


def valid_student_id(student: str) -> str | None:
    """``None`` if ``student`` is a safe student id, else the reason it is not.

    >>> valid_student_id("Zoë Müller") is None
    True
    >>> valid_student_id("..")
    "student id '..' contains '..'"
    """
    if not student or student.strip() != student:
        return "empty student id, or spaces around it"
    if student in (".", "..") or ".." in student:
        return f"student id {student!r} contains '..'"
    if not _ID_OK.match(student):
        return (f"student id {student!r}: only letters (any script), digits, space, "
                "'.', '-', '_', \"'\" and '@' are allowed, up to 64 characters, starting with a "
                "letter or digit")
    return None


@dataclass
class Entry:
    """One file of a download, understood."""

    student: str                 # the id the gradebook uses
    notebook: str | None         # the assignment notebook it is, None: not recognised
    copy: int = 0                # a resubmission number the LMS or a browser added
    name: str = ""               # the person's name, where the LMS gives one
    lms: str = ""
    submission: str = ""         # the LMS's submission id
    when: tuple | None = None    # the submission time the LMS wrote into the name
    late: bool = False
    original: str = ""           # the file name the student uploaded
    notes: list = field(default_factory=list)


def _match_notebook(filename: str, notebooks) -> tuple | None:
    """(notebook, copy) if ``filename`` is one of the notebooks, allowing for the
    copy marks of browsers and LMSs: ``x (2).ipynb``, ``x(2).ipynb``, ``x-2.ipynb``."""
    for nb in sorted(notebooks, key=len, reverse=True):
        m = re.match(rf"^{re.escape(nb)}(?:\s*\((?P<a>\d{{1,3}})\)|-(?P<b>\d{{1,3}}))?\.ipynb$",
                     filename, flags=re.IGNORECASE)
        if m:
            return nb, int(m.group("a") or m.group("b") or 0)
    return None


def _date(text, fmt):
    try:
        return _dt.datetime.strptime(text, fmt).timetuple()[:6]
    except ValueError:
        return None


def parse_entry(name: str, notebooks, assignment: str | None = None) -> Entry | str:
    """The :class:`Entry` for one path in an LMS zip, or the reason it is rejected."""
    name = unicodedata.normalize("NFC", name.replace("\\", "/"))
    parts = [p for p in name.split("/") if p]
    if not parts:
        return "empty name"
    if ".." in parts:
        return "path in the zip contains '..'"
    if parts[0] == "__MACOSX" or parts[-1].startswith("._"):
        return "macOS metadata, not a submission"
    base = parts[-1]
    if not base.lower().endswith(".ipynb"):
        return "not a notebook (.ipynb)"
    folders = parts[:-1]
    entry = None
    # Moodle, in folders
    if folders and (m := _MOODLE_DIR.match(folders[-1])):
        entry = Entry(m["uid"], None, name=m["name"], lms="moodle", original=base)
    elif m := _MOODLE_FLAT.match(base):
        entry = Entry(m["uid"], None, name=m["name"], lms="moodle", original=m["file"])
    elif m := _BLACKBOARD.match(base):
        if m["file"]:
            entry = Entry(m["user"], None, lms="blackboard", original=m["file"],
                          when=_date(m["time"], "%Y-%m-%d-%H-%M-%S"))
    elif m := _BRIGHTSPACE.match(base):
        entry = Entry(m["name"], None, name=m["name"], lms="brightspace", submission=m["sub"],
                      original=m["file"], when=_date(m["time"], "%b %d, %Y %I%M %p"),
                      notes=["Brightspace names carry no user id: the full name is the id"])
    elif m := _CANVAS.match(base):
        entry = Entry(m["uid"], None, name=m["name"], lms="canvas", submission=m["sub"],
                      late=bool(m["late"]), original=m["file"])
    if entry is None:
        found = _match_notebook(base, notebooks)
        if found and folders:
            student = folders[-1]
            if assignment and student == assignment and len(folders) >= 2:
                student = folders[-2]          # student/assignment/notebook.ipynb
            elif student in notebooks and len(folders) >= 2:
                student = folders[-2]
            entry = Entry(student, found[0], found[1], lms="tree", original=base)
        else:
            names = "|".join(re.escape(n) for n in sorted(notebooks, key=len, reverse=True))
            m = re.match(rf"^(?P<prefix>.+?)_(?P<nb>{names})(?:\s*\((?P<copy>\d{{1,3}})\))?\.ipynb$",
                         base)
            if not m:
                return (f"name does not match any known LMS format, <student>_<notebook>.ipynb or "
                        f"<student>/<notebook>.ipynb for notebook(s) {', '.join(notebooks)}")
            words = m["prefix"].split("_")
            ids = []
            while len(words) > 1 and words[-1].isdigit():
                ids.insert(0, words.pop())
            entry = Entry("_".join(words), m["nb"], int(m["copy"] or 0), lms="flat",
                          submission="_".join(ids), original=base)
    if entry.notebook is None:
        found = _match_notebook(entry.original, notebooks)
        if found:
            entry.notebook, entry.copy = found
    entry.student = entry.student.strip()
    why = valid_student_id(entry.student)
    if why:
        return why
    return entry


# --- who is who: (LMS, id) -> the gradebook's student id ---------------------------------
#: Formats whose ids are names a person arranged (folders, file prefixes): one namespace.
_FOLDER_FORMATS = ("tree", "flat")


def namespace(lms: str) -> str:
    """The namespace of an LMS's ids: each LMS its own; folder and flat names share one."""
    return "folder" if lms in _FOLDER_FORMATS or not lms else lms


def _same_name(name: str) -> str:
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", name).casefold())


class StudentIds:
    """The gradebook ids of the people in a course: one per (LMS namespace, LMS id).

    ``StudentIds(path, entries)`` reads what earlier collects recorded (a JSON file;
    none yet: empty) and takes the entries of one download; :meth:`apply` then gives
    each entry its gradebook id, or the reason it goes to ``manual``; :meth:`save`
    records the pairs.

    >>> a = Entry("31337", "nb", name="doejane", lms="canvas")
    >>> b = Entry("31337", "nb", name="Mallory Roe", lms="moodle")
    >>> ids = StudentIds(None, [a, b])
    >>> ids.apply(a), a.student, ids.apply(b), b.student
    (None, '31337', None, '31337@moodle')
    """

    def __init__(self, path: str | None, entries=()):
        self.path = path
        self.known = {}                      # gradebook id -> {"lms": ns, "id": id, "names": [...]}
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                self.known = json.load(fh).get("students", {})
        self.by_key = {(v["lms"], v["id"]): sid for sid, v in self.known.items()}
        self.names = {}                      # key -> {normalised name: name as written}
        for key, sid in self.by_key.items():
            for n in self.known[sid].get("names", []):
                self.names.setdefault(key, {})[_same_name(n)] = n
        self._batch = {}
        for e in entries:
            if isinstance(e, Entry) and e.name:
                self._batch.setdefault((namespace(e.lms), e.student), {})[_same_name(e.name)] = e.name

    def _id_for(self, key) -> str:
        if key in self.by_key:
            return self.by_key[key]
        ns, raw = key
        taken = set(self.known)
        sid = raw if raw not in taken else f"{raw}@{ns}"
        self.by_key[key] = sid
        self.known[sid] = {"lms": ns, "id": raw, "names": []}
        return sid

    def apply(self, entry: Entry) -> str | None:
        """Set ``entry.student`` to the gradebook id; ``None``, or why a human decides."""
        key = (namespace(entry.lms), entry.student)
        sid = self._id_for(key)
        entry.student = sid
        names = {**self.names.get(key, {}), **self._batch.get(key, {})}
        if len(names) > 1:
            return (f"one {entry.lms or 'folder'} id {key[1]!r} with different names "
                    f"({', '.join(sorted(names.values()))}): two people or one renamed? A human "
                    "decides; no file of this id is superseded")
        if entry.name:
            have = self.known[sid].setdefault("names", [])
            if entry.name not in have:
                have.append(entry.name)
        why = valid_student_id(sid)
        return f"{why} (the id this LMS's id gets in the gradebook)" if why else None

    def save(self) -> None:
        if not self.path:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"rule": "a person is (LMS, id); the first LMS to bring an id keeps it bare, "
                       "another LMS's same id is <id>@<lms>", "students": self.known}, fh,
                      indent=1, ensure_ascii=False, sort_keys=True)
        os.replace(tmp, self.path)
