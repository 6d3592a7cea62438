"""The canvas's right-click menu: what can be done with the box, edge or frame under the mouse."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu

from onnxviz.model.layout.inline import EMBEDDED
from onnxviz.model.layout.scene import BoxKind
from onnxviz.ui.canvas.painting import frame_title_rect

if TYPE_CHECKING:
    from onnxviz.ui.canvas.canvas import GraphCanvas


def context_menu(canvas: GraphCanvas, pos: QPoint) -> QMenu:
    """The menu for widget position ``pos`` of ``canvas.view``: selects what is under the pointer,
    offers graph actions for it, then the editing actions of the window (``window.editing``) if any."""
    menu = QMenu(canvas)
    d = canvas.drawable
    at = canvas.view.map_to_scene(pos.toPointF())
    box = d.box_at(at.x(), at.y()) if d is not None else -1
    edge = d.edge_at(at.x(), at.y(), max(4.0 / canvas.view.scale, 2.0)) if d is not None and box < 0 else -1
    if box >= 0:
        canvas.view.box_clicked.emit(box)
    elif edge >= 0:
        canvas.view.edge_clicked.emit(edge)
    if d is not None and box >= 0:
        ref = d.scene.box_ref[box]
        if ref.kind == BoxKind.GROUP:
            group = ref.group
            menu.addAction(f"Expand {group}", lambda: canvas.expand_group(group))
        elif ref.kind == BoxKind.OP:
            for label, scope in canvas.subgraphs_of(ref.node):
                menu.addAction(f"Open {label}", canvas.scope_opener(scope))
            _add_inline_action(canvas, menu, box)
        text = d.scene.box_name[box] or (ref.value if ref.value and ref.value != EMBEDDED else d.scene.box_title[box])
        menu.addAction("Copy Name", lambda: QGuiApplication.clipboard().setText(text))
    frame = d.group_frame_at(at.x(), at.y()) if d is not None else -1
    if d is not None and frame >= 0 and box < 0 and edge < 0 and frame_title_rect(d, frame).contains(at):
        canvas.view.frame_clicked.emit(frame)  # its title selects the group: Extract Selection offers it
    holder = canvas.frame_holder(frame) if frame >= 0 else None
    if d is not None and frame >= 0 and (holder is not None or not d.scene.group_path[frame].startswith(EMBEDDED)):
        what = "Bodies" if holder is not None else d.scene.group_path[frame]
        menu.addAction(f"Collapse {what}", lambda: canvas.collapse_frame(frame))
    if not menu.isEmpty():
        menu.addSeparator()
    _add_edit_actions(canvas, menu)
    if len(canvas.trail) > 1:
        menu.addAction("Back to Parent Graph", canvas.go_up)
    for name in ("fit", "actual", "find", "export"):
        action = canvas.actions_by_name.get(name)
        if action is not None:
            menu.addAction(action)
    return menu


def _add_inline_action(canvas: GraphCanvas, menu: QMenu, box: int) -> None:
    """Show the bodies of the If/Loop/Scan node of ``box`` (of the shown graph, or of a body drawn inside a
    node) inside its box, or put them away."""
    holder = canvas.box_holder(box)
    if holder is None:
        return
    scope, node = holder
    if holder in canvas.inline_holders:
        menu.addAction("Hide Bodies Inside", lambda: canvas.show_body_inline(node, False, scope))
    else:
        menu.addAction("Show Bodies Inside", lambda: canvas.show_body_inline(node, True, scope))


def _add_edit_actions(canvas: GraphCanvas, menu: QMenu) -> None:
    for add in canvas.context_actions:  # other features' actions (editing)
        add(menu)
