"""The features' ports: one owner of the document shown, whose followers (canvas, editing's badges) update by
themselves when another document is shown; a registry in which the order of provision does not matter; a save
that a question interrupts is finished by the same save, and the window is refreshed once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import hostile
import pytest
from PySide6.QtCore import SIGNAL
from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait

import onnxviz.ui.saving as saving
from onnxviz.model.document import Change, ChangeKind, Document
from onnxviz.model.graph.validation import node_badges
from onnxviz.ui.canvas import feature as canvas_feature
from onnxviz.ui.diff import feature as diff_feature
from onnxviz.ui.edit import feature as edit_feature
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.panels import feature as panels_feature
from onnxviz.ui.ports import DiffApi, Frame, Menus, OnFirstUse, PanelsApi, Registry, RunApi, ShownDocument
from onnxviz.ui.run import feature as run_feature
from onnxviz.ui.transform import feature as transform_feature

CONV = 0  # the example's first node


class _Api(Protocol):
    def hello(self) -> str: ...


class _Hello:
    def hello(self) -> str:
        return "hello"


def test_the_registry_hands_an_api_over_whenever_it_comes() -> None:
    registry, got = Registry(), []
    registry.when(_Api, lambda api: got.append(("before", api.hello())))  # type: ignore[type-abstract]
    assert registry.find(_Api) is None and got == []  # type: ignore[type-abstract]
    with pytest.raises(LookupError):
        registry.get(_Api)  # type: ignore[type-abstract]
    hello = _Hello()
    registry.provide(_Api, hello)  # type: ignore[type-abstract]
    registry.when(_Api, lambda api: got.append(("after", api.hello())))  # type: ignore[type-abstract]
    assert got == [("before", "hello"), ("after", "hello")] and registry.get(_Api) is hello  # type: ignore[type-abstract]


def test_a_feature_made_on_demand_is_made_by_the_first_feature_asking_for_it() -> None:
    """A feature made on first use: :meth:`Registry.when` waits for it without making it; ``find``/``get`` make it,
    once, and whoever provided it first (its own first use) is the one found."""
    registry, got, made = Registry(), [], []

    def make() -> _Hello:
        made.append(_Hello())
        registry.provide(_Api, made[-1])  # type: ignore[type-abstract]
        return made[-1]

    registry.provide_on_demand(_Api, make)  # type: ignore[type-abstract]
    registry.when(_Api, lambda api: got.append(api.hello()))  # type: ignore[type-abstract]
    assert made == [] and got == []
    assert registry.get(_Api) is made[0] and registry.find(_Api) is made[0]  # type: ignore[type-abstract]
    assert len(made) == 1 and got == ["hello"]
    early = Registry()
    early.provide_on_demand(_Api, lambda: pytest.fail("made twice"))  # type: ignore[type-abstract]
    hello = _Hello()
    early.provide(_Api, hello)  # type: ignore[type-abstract]  # its own first use came before any request
    assert early.get(_Api) is hello  # type: ignore[type-abstract]


def test_a_controller_made_on_first_use_is_made_once_and_kept_before_it_is_attached() -> None:
    """:class:`OnFirstUse`: nothing made until it is called; ``make`` runs once; ``attach`` gets the controller after
    it is kept, so a use during the wiring (the Activations dock shown, asking for the Run controller) gets the same
    one, not a second; every later call gives it without making or attaching again."""
    made: list[_Hello] = []
    attached: list[tuple[_Hello, _Hello | None, _Hello]] = []

    def make() -> _Hello:
        made.append(_Hello())
        return made[-1]

    def attach(hello: _Hello) -> None:
        attached.append((hello, late.made, late()))  # kept already; called again from inside the wiring

    late = OnFirstUse(make, attach)
    assert late.made is None and made == [] and attached == []
    first = late()
    assert made == [first] and attached == [(first, first, first)]
    assert late() is first and late.made is first and len(made) == 1 and len(attached) == 1


def test_the_diff_menu_is_there_from_the_start_and_the_diff_loads_on_first_use(
        qtbot: QtBot, example_path: Path) -> None:
    """File > Compare With... and the Diff menu (before Transform) are the window's from its first frame, enabled as
    before; the controller and its dock come when first asked for: by another feature (the transforms' diff), by
    ``window.diff``, or by an action."""
    w, other = MainWindow(), MainWindow()
    qtbot.addWidget(w)
    qtbot.addWidget(other)
    f = w.diff_feature
    titles = [a.text() for a in w.menuBar().actions()]
    assert titles.index("&Diff") == titles.index("&Transform") - 1
    assert f.actions["compare"] in w.file_menu.actions() and not f.actions["compare"].isEnabled()
    open_and_wait(qtbot, w, example_path)
    assert f.controller.made is None and f.actions["compare"].isEnabled() and not f.actions["next"].isEnabled()
    assert w.registry.get(DiffApi) is w.diff and f.controller.made is not None  # type: ignore[type-abstract]
    assert w.diff.actions is f.actions and not w.diff.dock.isVisible()
    assert f.actions["compare"].isEnabled() and not f.actions["close"].isEnabled()
    assert other.diff_feature.controller.made is None
    other.diff_feature.actions["close"].trigger()  # disabled: nothing happens
    assert other.diff_feature.controller.made is None
    other.diff_feature.actions["close"].setEnabled(True)
    other.diff_feature.actions["close"].trigger()
    assert other.diff_feature.controller.made is not None and not other.diff_feature.actions["close"].isEnabled()
    w.set_document(None)


def test_the_run_menu_and_the_activations_tab_are_there_from_the_start_and_the_run_loads_on_first_use(
        qtbot: QtBot, example_path: Path) -> None:
    """The Run menu, its toolbar and the Activations dock (a tab of the bottom group) are the window's from its
    first frame, enabled as before; the controller, the dock's content and the runner's modules come when first
    asked for: by an action (F9 runs the model), by the dock shown, or by another feature (``RunApi``)."""
    w, other = MainWindow(), MainWindow()
    qtbot.addWidget(w)
    qtbot.addWidget(other)
    f = w.run_feature
    assert f.actions["run"] in w.run_menu.actions() and not f.actions["run"].isEnabled()
    assert f.dock.toggleViewAction() in w.run_menu.actions() and not f.dock.built
    w.show()
    open_and_wait(qtbot, w, example_path)
    assert f.controller.made is None and not f.dock.built
    assert f.actions["run"].isEnabled() and f.actions["compare_saved"].isEnabled()
    assert not f.actions["cancel"].isEnabled() and not f.actions["export_all"].isEnabled()
    f.actions["run"].trigger()  # F9
    c = w.run_controller
    assert f.controller.made is not None and f.dock.built and c.actions is f.actions
    dialog = c.inputs_dialog  # "batch" was never given: the dialog asks once
    assert dialog is not None and not dialog.isHidden()
    dialog.dim_boxes["batch"].setValue(1)
    with qtbot.waitSignal(c.run_finished, timeout=60000):
        dialog.run_button.click()
    assert c.result is not None and "25 values" in f.dock.summary.text()
    assert f.actions["export_all"].isEnabled()  # the controller's states now
    other.show()
    open_and_wait(qtbot, other, example_path)
    assert other.run_feature.controller.made is None
    other.run_feature.dock.show()
    other.run_feature.dock.raise_()
    qtbot.waitUntil(lambda: other.run_feature.controller.made is not None)
    assert other.run_feature.dock.built and "Run the model" in other.run_feature.dock.summary.text()
    assert other.registry.get(RunApi) is other.run_controller  # type: ignore[type-abstract]
    w.set_document(None)
    other.set_document(None)


def test_the_shown_document_says_what_changed_and_forwards_the_documents_changes(example_path: Path) -> None:
    owner, heard = ShownDocument(), []
    owner.shown_changed.connect(lambda doc: heard.append(("shown", doc)))
    owner.document_changed.connect(lambda doc: heard.append(("document", doc)))
    owner.model_changed.connect(lambda change: heard.append(("model", change.kind)))
    a, b = Document.open(example_path), Document.open(example_path)
    owner.set_document(a)
    assert heard == [("shown", a), ("document", a)] and owner.shows_own
    heard.clear()
    owner.show(b)  # another document on the canvas: the window's stays
    owner.show(b)  # already shown: nothing to say
    assert heard == [("shown", b)] and owner.doc is a and owner.shown is b and not owner.shows_own
    heard.clear()
    a.changed.emit(Change("Save", ChangeKind.SAVED))
    owner.show(None)  # the window's own again
    assert heard == [("model", ChangeKind.SAVED), ("shown", a)] and owner.shows_own
    heard.clear()
    owner.set_document(b)
    a.changed.emit(Change("Save", ChangeKind.SAVED))  # the document left is no longer followed
    assert heard == [("shown", b), ("document", b)]


def test_the_window_provides_each_features_api(make_window: Callable[..., MainWindow]) -> None:
    w = make_window(shown=False)
    assert w.registry.get(PanelsApi) is w.panels  # type: ignore[type-abstract]
    assert w.registry.get(RunApi) is w.run_controller  # type: ignore[type-abstract]
    assert w.registry.get(DiffApi) is w.diff  # type: ignore[type-abstract]


def test_another_document_shown_takes_the_canvas_and_the_badges_follow(
        qtbot: QtBot, make_window: Callable[..., MainWindow], example_copy: Path, example_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What the diff's Show B's Graph does: through the owner, so the canvas shows B and the editing's badges (A's
    problems) leave B's graph and come back with A's, with no feature pushing them by hand."""
    w = make_window(shown=False)
    open_and_wait(qtbot, w, example_copy)
    doc = w.doc
    assert doc is not None
    with qtbot.waitSignal(w.validation.finished, timeout=20000):
        doc.edit.set_op_type(CONV, "Relu")  # a problem on the Conv: an error badge
    badges: list[dict[tuple[str, int], str]] = []
    monkeypatch.setattr(w.canvas, "set_node_badges", badges.append)
    other = Document.open(example_path)
    w.document.show(other)
    assert w.canvas.doc is other and w.doc is doc and badges[-1] == {} and not w.editing.on_canvas()
    w.document.show(None)
    assert w.canvas.doc is doc and badges[-1] == node_badges(doc.problems) and badges[-1].get(("", CONV)) == "error"
    assert w.editing.on_canvas()


def test_an_answered_save_question_finishes_the_same_save_and_the_window_refreshes_once(
        qtbot: QtBot, make_window: Callable[..., MainWindow], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = next(c for c in hostile.OPENS if c.name == "invalid_utf8_name")
    path = case.build(tmp_path)
    w = make_window()
    open_and_wait(qtbot, w, path)
    doc = w.doc
    assert doc is not None
    doc.edit.set_model_info(producer_name="unrelated")
    starts: list[Path] = []
    real = saving.save_document

    def counted(*args: object, **kwargs: object) -> None:
        starts.append(args[2])  # type: ignore[arg-type]
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(saving, "save_document", counted)  # File > Save's too: the window imports it at a save
    refreshed: list[object] = []
    show = w.status_fields.show_document
    monkeypatch.setattr(w.status_fields, "show_document", lambda d: (refreshed.append(d), show(d)))
    w.save_action.trigger()
    box = next(b for b in w.findChildren(QMessageBox) if b.isVisible())
    assert "not valid UTF-8" in box.text().replace("\u200b", "")
    next(b for b in box.findChildren(QPushButton) if b.text().replace("&", "") == "Save Escaped").click()
    assert not doc.is_dirty and starts == [path]  # one save, answered, not a second one started
    assert refreshed == [doc] and w.windowTitle() == f"{doc.name}[*] - onnxviz" and not w.isWindowModified()


class _InstalledBackwards(MainWindow):
    """The features installed in the reverse order (the canvas, a port of the others, first)."""

    def _install_features(self) -> None:
        frame = Frame(self, Menus(self.menuBar(), self.file_menu, self.edit_menu, self.view_menu, self.run_menu,
                                  self.help_menu, self.save_action), self.closing)
        doc, reg, settings = self.document, self.registry, self.settings
        self.canvas = canvas_feature.install(frame, doc, self, self.task_progress, self.theme, settings)
        self.transform_feature = transform_feature.install(frame, doc, self.canvas, self, self, self, reg)
        self.diff_feature = diff_feature.install(frame, doc, self.canvas, self, self, reg)
        self.run_feature = run_feature.install(frame, doc, self.canvas, self, self, settings, reg)
        self.editing = edit_feature.install(frame, doc, self.canvas, self, self)
        self.panels = panels_feature.install(frame, doc, self.canvas, settings, reg)


def test_the_features_find_each_other_whatever_the_order_of_installation(
        qtbot: QtBot, example_path: Path) -> None:
    w = _InstalledBackwards()
    qtbot.addWidget(w)
    assert w.diff.node_section in w.panels.node_panel.extras  # the diff's section, though the panels came later
    assert w.run_controller.receivers(SIGNAL("run_finished()")) == 1  # the diff shows A's graph when A runs
    before = w.diff.receivers(SIGNAL("diff_shown()"))
    assert w.transforms.dock is not None  # the transforms' controller, made now: it follows the diff's diff_shown
    assert w.diff.receivers(SIGNAL("diff_shown()")) == before + 1
    open_and_wait(qtbot, w, example_path)
    assert w.canvas.doc is w.doc and w.panels.doc is w.doc and w.editing.doc is w.doc
    assert _menu_titles(w) == _menu_titles(MainWindow())  # the menu bar in one order, whatever the installation's
    w.set_document(None)


def _menu_titles(w: MainWindow) -> list[str]:
    return [a.text().replace("&", "") for a in w.menuBar().actions()]
