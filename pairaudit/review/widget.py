"""The notebook widget of a review queue (needs ``pairaudit[review]``: ipywidgets).

One pair at a time with keep / drop / flip / skip / undo buttons, a note, filters (check, action, minimum
score, text search) that rebuild the queue, and a shortcut box: with it focused, type ``k`` keep, ``d``
drop, ``f`` flip, ``s`` skip, ``u`` undo (each key acts at once and the box clears). A plain text box is
used because it works in every notebook front end (Jupyter, VS Code, Colab) without a browser extension.
"""

from __future__ import annotations

import html
from dataclasses import replace
from typing import Any

from pairaudit.decisions import DECISIONS
from pairaudit.errors import require

ANY = "(any)"
SHORTCUTS = {"k": "keep", "d": "drop", "f": "flip", "s": "skip", "u": "undo"}


def _filters(w: Any, queue: Any) -> tuple[Any, Any, Any, Any]:
    """The filter controls (check, action, minimum score, text), set to the queue's filter."""
    checks = [ANY] + [c for c in queue.review.folder.checks if c != "malformed_record"]
    f_check = w.Dropdown(options=checks, value=queue.flt.check or ANY, description="check")
    f_action = w.Dropdown(options=[ANY, "drop", "flag"], value=queue.flt.action or ANY, description="action")
    f_score = w.Text(value="" if queue.flt.min_score is None else str(queue.flt.min_score),
                     placeholder="min score", description="score ≥")
    f_text = w.Text(value=queue.flt.text or "", placeholder="text in the pair", description="search")
    return f_check, f_action, f_score, f_text


def _buttons(w: Any) -> dict[str, Any]:
    """One button per decision, then skip and undo."""
    buttons = {d: w.Button(description=d, tooltip=f"record '{d}' and go to the next row ({d[0]})") for d in DECISIONS}
    buttons["skip"] = w.Button(description="skip", tooltip="next row without a decision (s)")
    buttons["undo"] = w.Button(description="undo", tooltip="take back the last decision (u)")
    return buttons


def queue_widget(queue: Any) -> Any:
    """The widget for ``queue`` (a VBox); ``.queue`` on it is the queue the filters currently select."""
    w = require("ipywidgets", "review", "review buttons")
    review = queue.review
    f_check, f_action, f_score, f_text = _filters(w, queue)
    status, pair_html, message = w.HTML(), w.HTML(), w.HTML()
    note = w.Text(placeholder="note (optional)")
    keys = w.Text(placeholder="keys: k d f s u", description="shortcuts")
    buttons = _buttons(w)
    box = w.VBox()
    box.queue = queue

    def show() -> None:
        q = box.queue
        view = q.next()
        done = view is None
        status.value = (f"<b>{q.label}</b>: {q.reviewed} of {q.total} reviewed"
                        + ("" if done else f" · row {q.current}"))
        pair_html.value = "<p>every row of this queue has a decision</p>" if done else view._repr_html_()
        for name, b in buttons.items():
            b.disabled = done and name != "undo"

    def act(what: str) -> None:
        q = box.queue
        if what == "undo":
            undone = q.undo()
            message.value = html.escape(undone.message)
        elif q.current is None:
            return
        elif what == "skip":
            q.skip()
            message.value = f"skipped row {q.current}"
        else:
            q.decide(q.current, what, note.value)
            message.value = f"recorded <b>{what}</b> for row {q.current}"
        note.value = ""
        show()

    def refilter(_: Any = None) -> None:
        try:
            score = float(f_score.value) if f_score.value.strip() else None
        except ValueError:
            message.value = f"score ≥ needs a number, not {f_score.value!r}"
            return
        flt = replace(queue.flt, check=None if f_check.value == ANY else f_check.value,
                      action=None if f_action.value == ANY else f_action.value,
                      min_score=score, text=f_text.value.strip() or None)
        box.queue = type(queue)(review, flt)
        message.value = ""
        show()

    def on_key(change: Any) -> None:
        value = (change.get("new") or "").strip().lower()
        if not value:
            return
        keys.value = ""
        what = SHORTCUTS.get(value[-1])
        if what is None:
            message.value = f"unknown key {value[-1]!r}: k keep, d drop, f flip, s skip, u undo"
            return
        act(what)

    for name, b in buttons.items():
        b.on_click(lambda _, n=name: act(n))
    keys.observe(on_key, names="value")
    for control in (f_check, f_action):
        control.observe(refilter, names="value")
    for control in (f_score, f_text):
        control.continuous_update = False
        control.observe(refilter, names="value")
    box.act, box.refilter = act, refilter
    show()
    box.children = [w.HBox([f_check, f_action]), w.HBox([f_score, f_text]), status, pair_html,
                    w.HBox([*buttons.values(), note]), w.HBox([keys, message])]
    return box
