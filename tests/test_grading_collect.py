"""Collecting an LMS download: a person is (LMS, id).

Real download names (Canvas, Moodle in folders and flat, Blackboard,
Brightspace, folders) go through ``Course.collect_zip`` -- what ``python -m
autograder collect --zip`` and ``make autograde`` run -- and the report, the
``submitted/`` folders and the export are checked: two people with one number
in different formats stay two students, one id with two names is ``manual``
(both files, nothing superseded), and a later collect finds the same people.
No notebook is executed: this is collection only.
"""

from __future__ import annotations

import csv
import json
import os
import sys
import zipfile

import nbformat
import pytest

from autograder.lms import Entry, StudentIds
from autograder.pipeline import Course

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_autograder import submission  # noqa: E402

RING = "ring_allreduce"


def _zip(path, entries, when=(2026, 11, 30, 10, 0, 0)):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries:
            z.writestr(zipfile.ZipInfo(name, date_time=when), data)
    return str(path)


@pytest.fixture(scope="module")
def notebooks():
    return {"full": nbformat.writes(submission(RING)),
            "blank": nbformat.writes(submission(RING, parts=set()))}


def _status(course):
    return {r["file"]: r for r in course.report(RING)}


def _submitted(course, student):
    """The notebook collected for ``student`` (as a dict), or None."""
    path = os.path.join(course.dir, "submitted", student, RING, f"{RING}.ipynb")
    return json.load(open(path, encoding="utf-8")) if os.path.exists(path) else None


def _same(text):
    return json.loads(text)


def test_one_number_in_two_lms_formats_is_two_students(tmp_path, notebooks):
    """Canvas user 31337 (full notebook) and Moodle participant 31337 (blank), one zip."""
    course = Course(str(tmp_path / "course"), verbose=False)
    canvas = f"doejane_31337_880012_{RING}.ipynb"
    moodle = f"Mallory Roe_31337_assignsubmission_file_/{RING}.ipynb"
    got = course.collect_zip(RING, _zip(tmp_path / "mixed.zip", [(canvas, notebooks["full"]),
                                                                  (moodle, notebooks["blank"])]))
    assert got == ["31337", "31337@moodle"]
    rows = _status(course)
    assert rows[canvas]["status"] == rows[moodle]["status"] == "accepted"
    assert (rows[canvas]["student"], rows[canvas]["lms"]) == ("31337", "canvas")
    assert (rows[moodle]["student"], rows[moodle]["name"]) == ("31337@moodle", "Mallory Roe")
    assert _submitted(course, "31337") == _same(notebooks["full"])
    assert _submitted(course, "31337@moodle") == _same(notebooks["blank"])
    # a later collect from Moodle alone finds the same person, not the Canvas student
    later = f"Mallory Roe_31337_assignsubmission_file_{RING} (2).ipynb"
    got = course.collect_zip(RING, _zip(tmp_path / "moodle2.zip", [(later, notebooks["full"])],
                                        when=(2026, 12, 1, 9, 0, 0)))
    assert got == ["31337", "31337@moodle"], "(the report lists every accepted student)"
    rows = _status(course)
    assert rows[later]["student"] == "31337@moodle" and rows[later]["status"] == "accepted"
    assert rows[canvas]["status"] == "accepted", "the Canvas student's line is untouched"
    assert rows[moodle]["status"] == "superseded", "the same Moodle person's older attempt"
    assert _submitted(course, "31337") == _same(notebooks["full"])
    recorded = json.load(open(os.path.join(course.dir, "lms_ids.json"), encoding="utf-8"))["students"]
    assert recorded["31337"]["lms"] == "canvas" and recorded["31337@moodle"]["lms"] == "moodle"


def test_one_id_with_two_names_goes_to_manual_and_nothing_is_lost(tmp_path, notebooks):
    course = Course(str(tmp_path / "course"), verbose=False)
    full = f"doejane_31337_880012_{RING}.ipynb"
    blank = f"roemallory_LATE_31337_880099_{RING}-1.ipynb"     # a later attempt, another name
    other = f"Ann Lee_4711_assignsubmission_file_{RING}.ipynb"
    got = course.collect_zip(RING, _zip(tmp_path / "canvas.zip", [
        (full, notebooks["full"]), (blank, notebooks["blank"]), (other, notebooks["full"])]))
    assert got == ["4711"], "the classmate is collected as usual"
    rows = _status(course)
    for f in (full, blank):
        assert rows[f]["status"] == "manual", rows[f]
        assert "different names" in rows[f]["reason"] and "doejane" in rows[f]["reason"] \
            and "roemallory" in rows[f]["reason"]
    assert not [r for r in rows.values() if r["status"] == "superseded"]
    assert _submitted(course, "31337") is None, "no file of the disputed id is graded as the answer"
    course.init()
    with open(course.export(), newline="", encoding="utf-8") as fh:
        exported = {r["student_id"]: r for r in csv.DictReader(fh)}
    assert exported["31337"]["status"] == "manual" and exported["31337"]["raw_score"] == ""
    assert full in exported["31337"]["notes"] and blank in exported["31337"]["notes"]
    assert exported["4711"]["status"] == "manual" and "not graded yet" in exported["4711"]["notes"]


def test_real_download_names_of_every_format_keep_their_people_apart(tmp_path, notebooks):
    """One id in every format: six people."""
    course = Course(str(tmp_path / "course"), verbose=False)
    names = [f"leejohn_2024_1_{RING}.ipynb",                                   # Canvas
             f"John Lee_2024_assignsubmission_file_/{RING}.ipynb",              # Moodle, folders
             f"Ring AllReduce_2024_attempt_2026-11-30-09-15-02_{RING}.ipynb",  # Blackboard
             f"152-2024 - 2024 - Nov 30, 2026 915 AM - {RING}.ipynb",           # Brightspace
             f"2024/{RING}/{RING}.ipynb"]                                        # folders
    got = course.collect_zip(RING, _zip(tmp_path / "all.zip", [(n, notebooks["full"]) for n in names]))
    assert len(got) == 5 and "2024" in got, got
    rows = _status(course)
    assert len({rows[n]["student"] for n in names}) == 5
    assert {rows[n]["lms"] for n in names} == {"canvas", "moodle", "blackboard", "brightspace", "tree"}
    assert all(rows[n]["status"] == "accepted" for n in names)


def test_student_ids_unit():
    a = Entry("7", "nb", name="Zoë Müller", lms="moodle")
    b = Entry("7", "nb", name="zoë  müller", lms="moodle")          # the same name, spaced
    c = Entry("7", "nb", lms="tree")
    d = Entry("7", "nb", lms="flat")                                  # folders and flat: one namespace
    ids = StudentIds(None, [a, b, c, d])
    assert [ids.apply(e) for e in (a, b, c, d)] == [None] * 4
    assert (a.student, b.student, c.student, d.student) == ("7", "7", "7@folder", "7@folder")
    e = Entry("x" * 60, "nb", lms="blackboard")
    f = Entry("x" * 60, "nb", lms="canvas")
    ids = StudentIds(None, [e, f])
    assert ids.apply(e) is None and "64 characters" in ids.apply(f)
