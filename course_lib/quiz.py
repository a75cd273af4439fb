"""Self-checking quizzes: single or multiple choice, with an explanation for
every wrong answer and the right one folded away.

A question is data (:class:`Question`); :func:`check` grades a choice and
returns the feedback a learner sees; :func:`show` puts one or more questions
in a notebook (radio buttons or checkboxes, a *Check* button, and a folded
"Show the answer").  In the static edition (``COURSE_STATIC=1``) the
questions print as text with the answers folded in ``<details>``.

The course's questions are data too: :func:`course_lib.content.chapter_quiz`
reads any chapter's quiz from the content bank, so a chapter shows its quiz
with ``cl.quiz.show(cl.content.chapter_quiz(7))``.

Examples
--------
>>> q = Question("Which figure is NVLink 4's total for one H100, per direction?",
...              ["900 GB/s", "450 GB/s", "25 GB/s"], answer={1},
...              explanation="18 links x 25 GB/s = 450 GB/s each way; 900 adds both ways.",
...              why_wrong={0: "900 GB/s counts both directions.",
...                         2: "25 GB/s is one link."})
>>> check(q, {1})[0]
True
>>> check(q, {0})
(False, '900 GB/s counts both directions.')
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

__all__ = ["Question", "check", "show", "answer_html", "prompt_text"]


@dataclass(frozen=True)
class Question:
    """One quiz question.

    Parameters
    ----------
    prompt : str
        The question (Markdown-free plain text or simple HTML).
    options : list of str
        The choices, in order.
    answer : set of int
        Indices of the correct options; more than one makes it multiple choice.
    explanation : str
        Why the answer is right (shown when the learner is right, and in the
        folded answer).
    why_wrong : dict, optional
        Option index -> why that option is wrong.  Every wrong option should
        have one; a test checks the course's question banks for it.
    source : str, optional
        Where the question comes from (e.g. a seed article's interview list).
    """

    prompt: str
    options: tuple
    answer: frozenset
    explanation: str
    why_wrong: dict = field(default_factory=dict)
    source: str = ""

    def __init__(self, prompt, options, answer, explanation, why_wrong=None,
                 source=""):
        options = tuple(options)
        answer = frozenset(int(a) for a in answer)
        if len(options) < 2:
            raise ValueError("options must hold at least 2 choices")
        if not answer or not all(0 <= a < len(options) for a in answer):
            raise ValueError(f"answer must be a non-empty set of option indices "
                             f"in 0..{len(options) - 1}, got {sorted(answer)}")
        if not explanation:
            raise ValueError("explanation must not be empty")
        why_wrong = dict(why_wrong or {})
        for k in why_wrong:
            if k in answer or not 0 <= k < len(options):
                raise ValueError(f"why_wrong key {k} must index a wrong option")
        object.__setattr__(self, "prompt", prompt)
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "answer", answer)
        object.__setattr__(self, "explanation", explanation)
        object.__setattr__(self, "why_wrong", why_wrong)
        object.__setattr__(self, "source", source)

    @property
    def multiple(self) -> bool:
        return len(self.answer) > 1


def check(question: Question, chosen) -> tuple[bool, str]:
    """Grade a choice; return ``(correct, feedback)``.

    ``chosen`` is an option index or a collection of indices.  Wrong
    choices get the explanation of the first wrong option picked, or say
    which right option is missing.
    """
    if isinstance(chosen, int):
        chosen = {chosen}
    chosen = {int(c) for c in chosen}
    bad = [c for c in chosen if not 0 <= c < len(question.options)]
    if bad:
        raise ValueError(f"chosen must index the options 0..{len(question.options) - 1}, "
                         f"got {bad}")
    if chosen == set(question.answer):
        return True, question.explanation
    wrong = sorted(chosen - set(question.answer))
    if wrong:
        reason = question.why_wrong.get(wrong[0])
        return False, reason or f"Option {wrong[0] + 1} is not right. Try again."
    if not chosen:
        return False, "Pick an answer first."
    return False, ("Part of the answer: this question has more than one right "
                   "option.")


def answer_html(question: Question) -> str:
    """The answer folded in a ``<details>`` block."""
    right = ", ".join(html.escape(question.options[i]) for i in sorted(question.answer))
    return (f"<details><summary>Show the answer</summary><p><b>{right}</b>. "
            f"{html.escape(question.explanation)}</p></details>")


_MULTIPLE_HINT = "(choose all that apply)"

#: How a quiz lays out its options in JupyterLab: ipywidgets gives every radio
#: label and checkbox one fixed-height, one-line row, so a long option ran over
#: the rows below it and a click on its end selected a neighbour.  Here each
#: option is a row as tall as its text, the text wrapping beside its own control,
#: and the whole row (control and text, one ``<label>``) selects it.
QUIZ_CSS = """
.ic-quiz { max-width: 100%; }
.ic-quiz .ic-quiz-options { width: 100%; max-width: 100%; }
.ic-quiz .widget-radio-box label, .ic-quiz .jupyter-widget-radio-box label,
.ic-quiz .widget-checkbox label, .ic-quiz .jupyter-widget-checkbox label {
  display: flex; align-items: flex-start; gap: 0.5em; height: auto; min-height: 1.6em;
  line-height: 1.4; white-space: normal; overflow: visible; text-overflow: clip;
  overflow-wrap: anywhere; padding: 0.2em 0; margin: 0 0 0.25em 0; cursor: pointer; }
.ic-quiz .widget-radio-box input, .ic-quiz .jupyter-widget-radio-box input,
.ic-quiz .widget-checkbox input, .ic-quiz .jupyter-widget-checkbox input {
  order: -1; float: none; flex: none; align-self: flex-start; height: 1em; width: 1em;
  margin: 0.2em 0 0 1px; line-height: 1; font-size: inherit; }
.ic-quiz .widget-checkbox, .ic-quiz .jupyter-widget-checkbox {
  width: 100%; height: auto; line-height: 1.4; }
"""


def prompt_text(question: Question) -> str:
    """The prompt as a learner reads it: a multiple-choice question says
    "(choose all that apply)" once (added here unless the prompt says it).

    >>> q = Question("Which are true?", ["a", "b"], answer={0, 1}, explanation="both")
    >>> prompt_text(q)
    'Which are true? (choose all that apply)'
    >>> prompt_text(Question("Which are true? (Choose all that apply)", ["a", "b"],
    ...                      answer={0, 1}, explanation="both"))
    'Which are true? (Choose all that apply)'
    """
    if not question.multiple or "all that apply" in question.prompt.lower():
        return question.prompt
    return f"{question.prompt} {_MULTIPLE_HINT}"


def show(questions):
    """Display one question or a list of them; return the widget box(es)."""
    from IPython.display import HTML, display

    from .widgets import static_mode

    if isinstance(questions, Question):
        questions = [questions]
    if static_mode():
        for i, q in enumerate(questions, 1):
            items = "".join(f"<li>{html.escape(o)}</li>" for o in q.options)
            display(HTML(f"<p><b>Q{i}.</b> {html.escape(prompt_text(q))}</p><ol type='A'>"
                         f"{items}</ol>{answer_html(q)}"))
        return None

    import ipywidgets as w

    boxes = []
    for i, q in enumerate(questions, 1):
        labels = [f"{chr(65 + k)}. {o}" for k, o in enumerate(q.options)]
        if q.multiple:
            picks = [w.Checkbox(description=label, indent=False,
                                layout=w.Layout(width="100%")) for label in labels]
            chooser = w.VBox(picks, layout=w.Layout(width="100%"))

            def chosen(picks=picks):
                return {k for k, p in enumerate(picks) if p.value}
        else:
            radio = w.RadioButtons(options=labels, value=None,
                                   layout=w.Layout(width="100%"))
            chooser = radio

            def chosen(radio=radio, labels=labels):
                return set() if radio.value is None else {labels.index(radio.value)}
        chooser.add_class("ic-quiz-options")
        button = w.Button(description="Check", button_style="primary")
        feedback = w.HTML()
        feedback.add_class("ic-quiz-feedback")

        def on_click(_b, q=q, chosen=chosen, feedback=feedback):
            ok, text = check(q, chosen())
            colour = "#1a7f37" if ok else "#b00"
            mark = "Right." if ok else "Not quite."
            feedback.value = (f"<span style='color:{colour}'><b>{mark}</b> "
                              f"{html.escape(text)}</span>")

        button.on_click(on_click)
        box = w.VBox([w.HTML(f"<p><b>Q{i}.</b> {html.escape(prompt_text(q))}</p>"),
                      chooser, button, feedback, w.HTML(answer_html(q))])
        box.add_class("ic-quiz")
        boxes.append(box)
    container = w.VBox([w.HTML(f"<style>{QUIZ_CSS}</style>")] + boxes)
    display(container)
    return container
