"""Quiz questions of chapters 1-6 ("the roads"), kept for older callers.

The questions live in the content bank (``course_lib/content_bank/en/``) and
:func:`course_lib.content.chapter_quiz` reads every chapter's quiz;
``questions(3)`` is ``chapter_quiz(3)`` for chapters 1-6.  Hardware numbers in
the options come from the catalog, formatted with their direction, so a quiz
never disagrees with the chapter.  Several questions restate, in our own words,
interview questions of the seed articles (000: the city-transport overview,
003: the NVLink article); where a seed's answer was wrong the question teaches
the corrected figure.

>>> [len(questions(c)) >= 3 for c in range(1, 7)]
[True, True, True, True, True, True]
>>> all(set(q.why_wrong) | set(q.answer) == set(range(len(q.options)))
...     for c in range(1, 7) for q in questions(c))
True
"""

from __future__ import annotations

from .content import chapter_quiz
from .units import check_int

__all__ = ["questions"]


def questions(chapter: int) -> list:
    """The quiz of ``chapter`` (1-6) as a list of :class:`~course_lib.quiz.Question`."""
    return chapter_quiz(check_int(chapter, "chapter", minimum=1, maximum=6))
