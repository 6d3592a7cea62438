"""The canvas's right-click menu: what can be done with the box, edge or frame under the mouse."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from PySide6.QtCore import QPoint
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from onnxviz.model.layout.inline import EMBEDDED
from onnxviz.model.layout.scene import BoxKind
from onnxviz.ui.canvas.navigation import ScopeNavigator
from onnxviz.ui.canvas.painting import frame_title_rect
from onnxviz.ui.canvas.view import GraphView

MenuAdder = Callable[[QMenu], None]   # adds another feature's actions to the menu


def context_menu(parent: QWidget, view: GraphView, nav: ScopeNavigator, pos: QPoint,
                 more: Sequence[MenuAdder] = (), actions_by_name: Mapping[str, QAction] | None = None) -> QMenu:
    """The menu for widget position ``pos`` of ``view``: selects what is under the pointer, offers graph
    actions for it (``nav``: the navigation of the canvas shown in ``view``), then the actions other
    features add (``more``: editing) and the canvas's own (``actions_by_name``: fit, actual, find, export)."""
    menu = QMenu(parent)
    d = nav.shown.drawable
    at = view.map_to_scene(pos.toPointF())
    box = d.box_at(at.x(), at.y()) if d is not None else -1
    edge = d.edge_at(at.x(), at.y(), max(4.0 / view.scale, 2.0)) if d is not None and box < 0 else -1
    if box >= 0:
        view.box_clicked.emit(box)
    elif edge >= 0:
        view.edge_clicked.emit(edge)
    if d is not None and box >= 0:
        ref = d.scene.box_ref[box]
        if ref.kind == BoxKind.GROUP:
            group = ref.group
            menu.addAction(f"Expand {group}", lambda: nav.expand_group(group))
        elif ref.kind == BoxKind.OP:
            for label, scope in nav.subgraphs_of(ref.node):
                menu.addAction(f"Open {label}", nav.scope_opener(scope))
            _add_inline_action(nav, menu, box)
        text = d.scene.box_name[box] or (ref.value if ref.value and ref.value != EMBEDDED else d.scene.box_title[box])
        menu.addAction("Copy Name", lambda: QGuiApplication.clipboard().setText(text))
    frame = d.group_frame_at(at.x(), at.y()) if d is not None else -1
    if d is not None and frame >= 0 and box < 0 and edge < 0 and frame_title_rect(d, frame).contains(at):
        view.frame_clicked.emit(frame)  # its title selects the group: Extract Selection offers it
    holder = nav.frame_holder(frame) if frame >= 0 else None
    if d is not None and frame >= 0 and (holder is not None or not d.scene.group_path[frame].startswith(EMBEDDED)):
        what = "Bodies" if holder is not None else d.scene.group_path[frame]
        menu.addAction(f"Collapse {what}", lambda: nav.collapse_frame(frame))
    if not menu.isEmpty():
        menu.addSeparator()
    for add in more:  # other features' actions (editing)
        add(menu)
    if len(nav.shown.trail) > 1:
        menu.addAction("Back to Parent Graph", nav.go_up)
    for name in ("fit", "actual", "find", "export"):
        action = (actions_by_name or {}).get(name)
        if action is not None:
            menu.addAction(action)
    return menu


def _add_inline_action(nav: ScopeNavigator, menu: QMenu, box: int) -> None:
    """Show the bodies of the If/Loop/Scan node of ``box`` (of the shown graph, or of a body drawn inside a
    node) inside its box, or put them away."""
    holder = nav.box_holder(box)
    if holder is None:
        return
    scope, node = holder
    if holder in nav.shown.inline:
        menu.addAction("Hide Bodies Inside", lambda: nav.show_body_inline(node, False, scope))
    else:
        menu.addAction("Show Bodies Inside", lambda: nav.show_body_inline(node, True, scope))

