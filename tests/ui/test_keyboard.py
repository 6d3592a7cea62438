"""Keyboard use of the window: menu mnemonics, Enter and Escape in dialogs, what is enabled without a model."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDialog, QMenu, QToolButton
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait

from onnxviz.ui.edit.model_dialogs import GraphIODialog
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.shortcuts import ShortcutsDialog


def _menus(actions: list[QAction], path: str) -> Iterator[tuple[str, QMenu]]:
    for action in actions:
        menu = action.menu()
        if isinstance(menu, QMenu):
            name = f"{path} > {action.text()}" if path else action.text()
            yield name, menu
            yield from _menus(menu.actions(), name)


def test_no_two_items_of_one_menu_share_a_mnemonic(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                     example_path: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_path)
    clashes = {}
    for name, menu in [("menu bar", w.menuBar()), *_menus(w.menuBar().actions(), "")]:
        letters = Counter(QKeySequence.mnemonic(a.text()).toString().lower()
                          for a in menu.actions() if not a.isSeparator())
        letters.pop("", None)
        if repeated := sorted(k for k, n in letters.items() if n > 1):
            clashes[name] = repeated
    assert clashes == {}


def test_a_mnemonic_key_in_the_open_edit_menu_runs_its_item(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                            example_path: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_path)
    assert w.doc is not None
    w.doc.selection.select_node("", 0)
    w.edit_menu.popup(w.mapToGlobal(w.rect().center()))
    qtbot.waitExposed(w.edit_menu)
    qtbot.keyClick(w.edit_menu, Qt.Key.Key_N)   # Rename Node (Copy Name shared the N)
    qtbot.waitUntil(lambda: isinstance(w.editing.dialog, QDialog) and w.editing.dialog.isVisible())
    assert w.editing.dialog.windowTitle() == "Rename Node"
    w.editing.dialog.reject()


def test_enter_in_the_run_inputs_dialog_runs(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                             example_path: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_path)
    c = w.run_controller
    c.actions["run_inputs"].trigger()
    dialog = c.inputs_dialog
    assert dialog is not None
    qtbot.waitExposed(dialog)
    with qtbot.waitSignal(c.run_finished, timeout=60000):   # typed a size for "batch", then Enter
        qtbot.keyClick(dialog.dim_boxes["batch"], Qt.Key.Key_Return)


def test_enter_after_a_new_input_name_adds_the_input(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                     example_path: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_path)
    assert w.doc is not None
    w.editing.actions["graph_io"].trigger()
    dialog = w.editing.dialog
    assert isinstance(dialog, GraphIODialog)
    qtbot.keyClicks(dialog.new_name, "mask")
    qtbot.keyClick(dialog.new_name, Qt.Key.Key_Return)
    assert "mask" in [v.name for v in w.doc.model.graph.input]
    assert dialog.new_name.text() == "" and dialog.isVisible()
    dialog.reject()


def test_graph_actions_wait_for_a_model(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                        example_path: Path) -> None:
    w = make_window()
    view = {a.text(): a for a in w.view_menu.actions()}
    graph_actions = [view[t] for t in ("&Fit Graph", "Zoom &In", "Fin&d...", "&Export Image...")]
    nan = w.run_controller.actions["first_nan"]
    assert not any(a.isEnabled() for a in graph_actions) and not nan.isEnabled()
    assert not view["&Parent Graph"].isEnabled()
    open_and_wait(qtbot, w, example_path)
    assert all(a.isEnabled() for a in graph_actions)
    assert not view["&Parent Graph"].isEnabled() and not nan.isEnabled()  # the main graph; no run yet
    w.run_controller.actions["run"].trigger()   # asks for the size of "batch" first
    dialog = w.run_controller.inputs_dialog
    assert dialog is not None
    with qtbot.waitSignal(w.run_controller.run_finished, timeout=60000):
        qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    assert nan.isEnabled()
    w.close_model_action.trigger()
    assert not any(a.isEnabled() for a in graph_actions) and not nan.isEnabled()


def test_button_tooltips_are_sentences(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                       example_path: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, example_path)
    tips = {b.text(): b.toolTip() for b in w.findChildren(QToolButton) if b.isVisibleTo(w) and b.toolTip()}
    assert {"−", "+", "1:1", "Fit", "Find"} <= tips.keys()   # the short texts stay once the actions are enabled
    assert tips["Find"] == "Find nodes, op types, values and initializers (Ctrl+F)"
    assert tips["+"].startswith("Zoom in (")
    bad = {text: tip for text, tip in tips.items() if not tip[0].isupper() or "..." in tip}
    assert bad == {}


def test_shortcuts_list_the_keys_of_the_graph(qtbot: QtBot, make_window: Callable[[], MainWindow]) -> None:
    w = make_window()
    help_actions = {a.text(): a for a in w.help_menu.actions()}
    help_actions["&Keyboard Shortcuts"].trigger()
    dialog = next(d for d in w.findChildren(ShortcutsDialog) if d.isVisible())
    rows = {(name, keys, where) for name, keys, where in dialog.rows()}
    assert ("Back to the parent graph", "Backspace", "Graph") in rows
    assert ("Select a producer, a consumer", "Up, Down", "Graph") in rows
    assert ("Close the search", "Esc", "Find") in rows
    qtbot.keyClick(dialog.filter, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_enter_in_the_shortcuts_filter_goes_to_the_results(qtbot: QtBot, make_window: Callable[[], MainWindow]) -> None:
    """Enter after typing a filter selects the first shortcut left instead of closing the dialog."""
    w = make_window()
    help_actions = {a.text(): a for a in w.help_menu.actions()}
    help_actions["&Keyboard Shortcuts"].trigger()
    dialog = next(d for d in w.findChildren(ShortcutsDialog) if d.isVisible())
    qtbot.keyClicks(dialog.filter, "undo")
    qtbot.keyClick(dialog.filter, Qt.Key.Key_Return)
    assert dialog.isVisible()
    selected = dialog.table.selectionModel().selectedRows()
    assert len(selected) == 1 and "undo" in dialog.table.item(selected[0].row(), 0).text().lower()
    qtbot.keyClick(dialog.table, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_breadcrumb_links_and_refusals_follow_the_dark_theme(qtbot: QtBot, make_window: Callable[[], MainWindow]) -> None:
    """The breadcrumb's links take the theme's link colour and a form's refusal a red readable on it
    (both were fixed light-theme colours)."""
    from PySide6.QtGui import QColor, QPalette

    from onnxviz.ui.canvas.breadcrumb import Breadcrumb
    from onnxviz.ui.theme import Theme
    from onnxviz.ui.widgets.forms import ERROR_COLOURS, ErrorLabel

    w = make_window()
    try:
        w.theme.set_choice(Theme.DARK)
        crumb = Breadcrumb()
        qtbot.addWidget(crumb)
        crumb.set_trail(None, ["", "0.then_branch"])
        crumb.show()
        link = crumb.buttons[0]
        link.ensurePolished()
        assert link.palette().color(link.foregroundRole()) == QApplication.palette().color(QPalette.ColorRole.Link)
        error = ErrorLabel()
        qtbot.addWidget(error)
        error.ensurePolished()
        assert error.palette().color(error.foregroundRole()) == QColor(ERROR_COLOURS[1])
    finally:
        w.theme.set_choice(Theme.LIGHT)  # the palette is application-wide: leave it light for others


def test_tab_goes_through_the_graph_io_rows_then_the_add_row(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                             example_path: Path) -> None:
    """Name, type, shape of each row in reading order, then the new-input field and the buttons
    (the rows' fields, made after the buttons, came after Close)."""
    w = make_window()
    open_and_wait(qtbot, w, example_path)
    w.editing.actions["graph_io"].trigger()
    dialog = w.editing.dialog
    assert isinstance(dialog, GraphIODialog) and dialog.table.rowCount() >= 2
    cells = [dialog.cell(r, c) for r in range(dialog.table.rowCount()) for c in (1, 2, 3)]
    expected = [*cells, *dialog._after_table]
    wanted = set(map(id, expected))
    seen: list[object] = []
    widget = dialog.table.nextInFocusChain()
    while widget is not dialog.table and len(seen) < len(expected):
        if id(widget) in wanted:
            seen.append(widget)
        widget = widget.nextInFocusChain()
    assert seen == expected
    dialog.reject()
