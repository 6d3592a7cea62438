"""The graph canvas: the main window's central widget.

Public API (used by other features through ``window.canvas``):

* ``scope`` - the scope shown (``""`` main graph, ``"12.then_branch"``, ``"fn:dom:name:"``);
* ``show_scope(scope)`` - lay out and show another graph of the model;
* ``reveal_node(scope, node)`` - show ``scope``, expand the groups hiding ``node``, select and centre it;
* ``fit()`` - show the whole graph;
* ``selected_nodes()`` - the selected node, or the nodes of the selected group, in the shown scope;
* ``set_node_badges({(scope, node): "error" | "warning"})`` - small marks on boxes (or their group box);
* ``set_overlay({(scope, node): value}, title, flagged=None, scheme=Scheme())`` / ``clear_overlay()`` - colour
  op boxes by value (a box's tooltip tells its value); ``legend`` is its key, drawn in a foldable strip
  above the graph (:mod:`onnxviz.ui.canvas.legend`), never over it;
* ``set_ghosts({scope: [Ghost]}, describe)`` - boxes of nodes another model has (a diff's added nodes),
  drawn beside their neighbours in every scene; ``select_ghost(key)``/``reveal_ghost(...)`` select one,
  ``ghost_selected(key)`` says a ghost was selected (it is no node of the document: edits never see it),
  ``ghost_activated(key)`` that one was double-clicked (or Enter pressed on it);
* ``node_notes`` - functions ``(scope, node) -> html line`` whose lines end an op box's tooltip;
* ``export_image(path)`` - the whole graph to PNG or SVG;
* ``context_menu(pos)`` - the right-click menu for a position of the view;
* signals ``scene_ready()`` (a newly built scene has been painted) and ``scope_changed(str)``.

The canvas is made of parts, each with one job, that share what is shown (``shown``:
:class:`~onnxviz.ui.canvas.shown.ShownGraph`, the document, scope, layout and drawing):

* ``jobs`` (:mod:`~onnxviz.ui.canvas.jobs`) - the layout jobs and their queue: layouts run off the GUI thread
  (:class:`~onnxviz.ui.tasks.Task`) with progress and cancel, a new document's after the window's next frame;
* ``navigation`` (:mod:`~onnxviz.ui.canvas.navigation`) - which graph is shown and how (groups, bodies drawn
  inside their nodes, layout choices), entering and leaving scopes, revealing nodes, ghosts and search hits;
* ``selection`` (:mod:`~onnxviz.ui.canvas.selecting`) - clicks to selections, the selection followed in view;
* ``marks`` (:mod:`~onnxviz.ui.canvas.marking`) - badges, overlay and ghosts;
* ``tooltips`` (:mod:`~onnxviz.ui.canvas.tooltips`) - the boxes' and edges' tooltips;
* ``view`` (:mod:`~onnxviz.ui.canvas.view`) - the widget that paints the drawing and turns input into signals.

Tests and features look at the parts through their public properties (``jobs.task``, ``jobs.pending``,
``shown.box_of_node(node)``, ``marks.overlay``, ``tooltips.text(box, edge)``...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect, Signal
from PySide6.QtGui import QAction, QContextMenuEvent, QKeySequence, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QMenu, QStackedWidget, QToolButton, QVBoxLayout, QWidget

from onnxviz.model.document import Change, ChangeKind, Document
from onnxviz.model.layout.describe import enterable_boxes, outer_boxes
from onnxviz.model.layout.drawable import Drawable
from onnxviz.model.layout.inline import Holder, InlineLayout
from onnxviz.model.layout.options import LayoutOptions
from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.breadcrumb import Breadcrumb, scope_trail
from onnxviz.ui.canvas.jobs import Job, LayoutJobs
from onnxviz.ui.canvas.legend import LegendStrip
from onnxviz.ui.canvas.marking import CanvasMarks
from onnxviz.ui.canvas.marks import Legend, Overlay
from onnxviz.ui.canvas.menus import context_menu
from onnxviz.ui.canvas.minimap import Minimap, make_host
from onnxviz.ui.canvas.navigation import ScopeNavigator
from onnxviz.ui.canvas.progress_overlay import LayoutProgress
from onnxviz.ui.canvas.search import SearchPanel
from onnxviz.ui.canvas.selecting import SelectionFollower
from onnxviz.ui.canvas.shown import ShownGraph
from onnxviz.ui.canvas.tooltips import Tooltips
from onnxviz.ui.canvas.view import GraphView
from onnxviz.ui.statusbar import TaskProgress


@dataclass(frozen=True)
class ViewState:
    """What the user made of the view, for a reload to keep: the graph shown and its breadcrumb, the groups
    opened, the bodies drawn inside their nodes, and the zoom and centre (``placed``: the user moved the view
    from its opening one)."""

    scope: str
    trail: list[str]
    expanded: frozenset[str]
    inline: frozenset[Holder]
    scale: float
    center: QPointF
    placed: bool


class GraphCanvas(QWidget):
    """Breadcrumb, the graph view with its minimap, a find box and a layout progress bar; made of parts that
    share what is shown (:attr:`shown`): the layout jobs (:attr:`jobs`), the navigation of scopes and inline
    bodies (:attr:`navigation`), the selection followed (:attr:`selection`), badges, overlay and ghosts
    (:attr:`marks`) and the tooltips (:attr:`tooltips`). Its methods are the API other features use."""

    scene_ready = Signal()
    scope_changed = Signal(str)
    ghost_selected = Signal(int)   # the key of the ghost box clicked or selected
    ghost_activated = Signal(int)  # the key of the ghost box double-clicked (or Enter on it)
    weight_row_clicked = Signal(str, str)  # (scope, value) of the weight row of a box that was clicked
    layout_failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.shown = ShownGraph()
        self.context_actions: list[Callable[[QMenu], None]] = []  # add other features' actions to the right-click menu
        self._build()

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        self.breadcrumb = Breadcrumb()
        self.view = GraphView()
        self.view_host = make_host(self.view)
        self.minimap = Minimap(self.view, self.view_host)
        self.minimap.hide()
        self.search_panel = SearchPanel(self)
        self.search_panel.hide()
        self.progress_bar = LayoutProgress(self)
        self.progress_bar.hide()
        self.toolbar = QHBoxLayout()
        self.toolbar.setContentsMargins(0, 2, 6, 2)
        self.toolbar.addWidget(self.breadcrumb, 1)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.view_host)
        self.placeholder: QWidget | None = None
        self.actions_by_name: dict[str, QAction] = {}
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        box.addLayout(self.toolbar)
        self.legend_strip = LegendStrip()   # the overlay's key, above the graph: it never covers a box
        box.addWidget(self.legend_strip)
        self.toolbar.addWidget(self.legend_strip.toggle)
        box.addWidget(self.pages, 1)
        self._build_parts()
        self._menu_filter_installed = False
        self.last_menu: QMenu | None = None

    def _build_parts(self) -> None:
        shown, v = self.shown, self.view
        self.jobs = LayoutJobs(shown, v, self.progress_bar, lambda: self.marks.ghosts, self._deliver, self._fail,
                               lambda: self.navigation.rebuild(), self._place_overlays, self)
        self.marks = CanvasMarks(shown, v, self.legend_strip, self.jobs)
        self.tooltips = Tooltips(shown, self.marks)
        self.selection = SelectionFollower(shown, v, lambda scope, then: self.navigation.show_scope(scope, then),
                                           lambda path: self.navigation.expand_group(path), self)
        self.navigation = nav = ScopeNavigator(shown, self.jobs, self.selection, self)
        self.breadcrumb.scope_clicked.connect(nav.show_scope)
        self.search_panel.activated.connect(nav.jump_to)
        self.progress_bar.cancel.clicked.connect(self.jobs.cancel)
        v.box_clicked.connect(self.selection.box_clicked)
        v.edge_clicked.connect(self.selection.edge_clicked)
        v.empty_clicked.connect(self.selection.empty_clicked)
        v.box_double_clicked.connect(nav.box_double_clicked)
        v.box_toggled.connect(nav.toggle_box)
        v.frame_toggled.connect(nav.collapse_frame)
        v.frame_clicked.connect(self.selection.frame_clicked)
        v.step_requested.connect(self.selection.step)
        v.activate_requested.connect(nav.activate_selected)
        v.back_requested.connect(nav.go_up)
        v.tooltip_provider = self.tooltips.text
        self.jobs.scene_ready.connect(self.scene_ready)
        self.jobs.failed.connect(self.layout_failed)
        self.selection.ghost_selected.connect(self.ghost_selected)
        self.selection.weight_row_clicked.connect(self.weight_row_clicked)
        nav.ghost_activated.connect(self.ghost_activated)
        self._forward_api()

    def _forward_api(self) -> None:
        """The parts' methods other features call on the canvas (typed and documented where defined)."""
        nav, selection, marks = self.navigation, self.selection, self.marks
        self.show_scope, self.enter_scope, self.leave_scope = nav.show_scope, nav.enter_scope, nav.leave_scope
        self.go_up, self.reveal_node, self.reveal_ghost, self.jump_to = nav.go_up, nav.reveal_node, \
            nav.reveal_ghost, nav.jump_to
        self.subgraphs_of, self.show_body_inline, self.box_holder, self.frame_holder = nav.subgraphs_of, \
            nav.show_body_inline, nav.box_holder, nav.frame_holder
        self.expand_group, self.collapse_group, self.expand_all = nav.expand_group, nav.collapse_group, \
            nav.expand_all
        self.rebuild, self.relabel, self.set_layout_options = nav.rebuild, nav.relabel, nav.set_options
        self.cancel_layout = self.jobs.cancel
        self.selected_box, self.selected_nodes = selection.selected_box, selection.selected_nodes
        self.step, self.actual_size, self.select_ghost = selection.step, selection.actual_size, selection.select_ghost
        self.set_ghosts, self.set_node_badges = marks.set_ghosts, marks.set_badges
        self.set_overlay, self.clear_overlay = marks.set_overlay, marks.clear_overlay

    def set_placeholder(self, widget: QWidget) -> None:
        """What to show while no document is open."""
        self.placeholder = widget
        self.pages.addWidget(widget)
        self.pages.setCurrentWidget(widget)

    def add_tool_buttons(self, actions: list[tuple[QAction, str]]) -> None:
        """Compact buttons at the right of the breadcrumb bar: (action, short text)."""
        for action, text in actions:
            # on the action, not the button: the button takes them from the action again whenever it changes
            action.setIconText(text)
            what = action.statusTip() or action.text().replace("&", "").removesuffix("...")  # a sentence
            action.setToolTip(f"{what} ({action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)})")
            button = QToolButton()
            button.setDefaultAction(action)
            button.setAutoRaise(True)
            button.setMinimumWidth(30)
            self.toolbar.addWidget(button)

    def set_minimap_enabled(self, on: bool) -> None:
        self.minimap.set_enabled(on)

    def set_minimap_place(self, place: str) -> None:
        """One of :data:`~onnxviz.ui.canvas.minimap.PLACES`: docked beside the graph or a corner over it."""
        self.minimap.set_place(place)

    # -- what is shown -----------------------------------------------------------------------
    @property
    def doc(self) -> Document | None:
        """The document shown (None: none)."""
        return self.shown.doc

    @property
    def layout_obj(self) -> InlineLayout | None:
        """The layout of the graph shown (None before one is made)."""
        return self.shown.layout

    @property
    def drawable(self) -> Drawable | None:
        """The drawing shown (None before one is made)."""
        return self.shown.drawable

    @property
    def scope(self) -> str:
        """The scope currently shown."""
        return self.shown.scope

    @property
    def trail(self) -> list[str]:
        """The scopes of the breadcrumb, from the main graph to the shown one."""
        return list(self.shown.trail)

    @property
    def legend(self) -> Legend | None:
        """The key of the overlay shown (in the strip above the graph), or None."""
        return self.legend_strip.legend

    @property
    def shown_overlay(self) -> Overlay | None:
        """The overlay as drawn on the shown scene."""
        return self.marks.shown_overlay

    @property
    def node_notes(self) -> list[Callable[[str, int], str]]:
        """Functions ``(scope, node) -> html line`` whose lines end an op box's tooltip (append to it)."""
        return self.tooltips.node_notes

    @property
    def status_progress(self) -> TaskProgress | None:
        """The window's task progress (layouts show their progress and cancel there), or None."""
        return self.jobs.status_progress

    @status_progress.setter
    def status_progress(self, progress: TaskProgress | None) -> None:
        self.jobs.status_progress = progress

    @property
    def layout_options(self) -> LayoutOptions:
        """The View menu's choices every layout of this canvas follows (setting it lays nothing out)."""
        return self.navigation.options

    @layout_options.setter
    def layout_options(self, options: LayoutOptions) -> None:
        self.navigation.options = options

    @property
    def layout_factory(self) -> Callable[..., Any]:
        """Makes the layout of a scope: ``(index, scope, expanded[, inline])``."""
        return self.navigation.layout_factory

    @layout_factory.setter
    def layout_factory(self, factory: Callable[..., Any]) -> None:
        self.navigation.layout_factory = factory

    @property
    def busy(self) -> bool:
        """A layout job runs or is queued."""
        return self.jobs.busy


    # -- documents -----------------------------------------------------------------------------
    def set_document(self, doc: Document | None) -> None:
        """Show ``doc``'s main graph (laid out in the background); None clears the canvas."""
        if self.shown.doc is not None:
            self.shown.doc.selection.changed.disconnect(self.selection.on_selection)
        self.shown.doc = doc
        self.marks.clear()
        self.search_panel.set_index(doc.index if doc is not None else None)
        self.pages.setCurrentWidget(self.view_host if doc is not None or self.placeholder is None else self.placeholder)
        if doc is None:
            self.jobs.cancel()
        else:
            doc.selection.changed.connect(self.selection.on_selection)
        self.shown.layout, self.shown.drawable = None, None   # the previous model's drawing goes at once
        self.view.set_drawable(None)
        self._set_scope("", [""])                               # and its subgraph trail with it
        if doc is not None:
            self.view.message = f"Laying out {len(doc.model.graph.node):,} nodes..."
            self.navigation.load_scope("", [""], expanded=None, keep_view=False, after_frame=True)

    def view_state(self) -> ViewState | None:
        """The view as the user left it (None before a graph is drawn)."""
        shown = self.shown
        if shown.doc is None or shown.layout is None:
            return None
        return ViewState(shown.scope, list(shown.trail), frozenset(shown.layout.expanded), shown.inline,
                         self.view.scale, QPointF(self.view.center), not self.view.auto_view)

    def restore_view_state(self, state: ViewState) -> None:
        """After :meth:`set_document` with a new version of the model shown (a reload): the same graph, groups
        and inline bodies where the new model still has them, at the same zoom and place when the user had
        moved the view (else the new graph's opening view)."""
        if self.shown.doc is None:
            return
        graphs = self.shown.doc.index.graphs
        if state.scope not in graphs:
            return  # set_document shows the main graph
        trail = state.trail if all(s in graphs for s in state.trail) else scope_trail(state.scope)
        inline = frozenset((scope, node) for scope, node in state.inline
                           if scope in graphs and 0 <= node < len(graphs[scope].nodes))
        if state.placed:
            self.view.place(state.scale, state.center)
        self.navigation.load_scope(state.scope, trail, state.expanded, keep_view=state.placed, inline=inline)

    def on_model_changed(self, change: Change) -> None:
        """The document changed: box texts in place when only they changed, else a new layout (or labels)."""
        if change.kind.changes_model and change.nodes is not None and self.jobs.retext(change.nodes):
            return
        if change.kind.changes_model:
            self.navigation.rebuild()
        elif change.kind == ChangeKind.VALIDATED:
            self.navigation.follow_validation()

    # -- a finished layout job -------------------------------------------------------------------
    def _deliver(self, job: Job, layout: InlineLayout, drawable: Drawable) -> None:
        follow = self.selection.in_sight()   # before the new layout replaces the boxes it is looked up in
        self.shown.layout = layout
        if job.scope is not None:  # before showing: badges, overlay and selection are looked up per scope
            self._set_scope(*job.scope)
        self._show(drawable, keep_view=job.keep_view, announce=job.announce, follow=follow)

    def _fail(self, job: Job, message: str) -> None:
        self._status(message)
        if job.new_layout:   # never leave the previous document's drawing on screen
            self.shown.layout, self.shown.drawable = None, None
            self.view.set_drawable(None)
        self.view.message = message
        self.view.update()

    def _show(self, drawable: Drawable, keep_view: bool, announce: bool, follow: bool = False) -> None:
        """``follow``: the selection was in sight; it stays in sight in the new layout (a new opening view,
        as after turning the layout, shows it too)."""
        self.shown.drawable = drawable
        self.view.message = "" if drawable.scene.n_boxes else "This graph has no nodes, inputs or outputs."
        self.selection.forget()
        doc = self.shown.doc
        if doc is not None:
            self.view.options.enterable = enterable_boxes(doc.index, drawable.scene)
            self.view.options.outer = outer_boxes(doc.index, drawable.scene) | frozenset(
                emb.box_start + b for emb in self.shown.bodies_drawn for b in outer_boxes(doc.index, emb.scene))
            self.view.options.body_toggles = self.navigation.body_toggles(drawable)
        # labels that arrived before the user moved the view laid the graph out again: its opening view again
        keep = keep_view and (announce or not self.view.auto_view)
        self.view.set_drawable(drawable, keep_view=keep)
        self.marks.apply()
        self.selection.follow(center=follow or not keep)
        self._place_overlays()
        if announce:
            self.jobs.announce_when_painted()

    def _set_scope(self, scope: str, trail: list[str]) -> None:
        changed = scope != self.shown.scope
        self.shown.scope, self.shown.trail = scope, trail
        self.breadcrumb.set_trail(self.shown.doc.index if self.shown.doc is not None else None, trail)
        if changed:
            self.scope_changed.emit(scope)

    @property
    def inline_nodes(self) -> frozenset[int]:
        """Nodes of the shown scope drawn with their bodies inside."""
        return frozenset(node for scope, node in self.shown.inline if scope == self.shown.scope)

    @property
    def inline_holders(self) -> frozenset[Holder]:
        """(scope, node) of every node drawn with its bodies inside: of the shown scope and of its bodies."""
        return self.shown.inline

    def fit(self) -> None:
        self.view.fit()

    # -- the view's look and layout choices -----------------------------------------------------------
    def export_image(self, path: str) -> None:
        """Draw the whole shown graph (not only the viewport) to ``path`` (.png or .svg)."""
        if self.shown.drawable is None:
            from onnxviz.model.errors import OnnxvizError

            raise OnnxvizError("there is no graph to export.")
        options = self.view.options
        plain = type(options)(show_names=options.show_names, badges=options.badges, overlay=options.overlay,
                              flagged_box=options.flagged_box, enterable=options.enterable,
                              outer=options.outer)
        from onnxviz.ui.canvas.export import export_image  # with QtSvg: not in the first frame

        export_image(self.shown.drawable, Path(path), options=plain)

    def set_dark(self, on: bool) -> None:
        """Follow the window's light/dark theme."""
        style.use_dark(on)
        self.minimap.refresh()
        self.view.update()

    def set_show_names(self, on: bool) -> None:
        """Node names in the box headers; boxes are laid out again, wide enough for them."""
        self.view.options.show_names = on
        self.view.update()
        self.set_layout_options(replace(self.layout_options, names=on))

    def set_edge_names(self, on: bool) -> None:
        """Tensor names before the shapes on edges (only the labels are made again)."""
        self.set_layout_options(replace(self.layout_options, edge_names=on))

    def set_direction(self, direction: str) -> None:
        """Lay the graph out top to bottom or left to right (shown from its opening view)."""
        self.set_layout_options(replace(self.layout_options, direction=direction))


    def open_search(self) -> None:
        self._place_overlays()
        self.search_panel.open()

    # -- widget events ------------------------------------------------------------------------------
    def context_menu(self, pos: QPoint) -> QMenu:
        """The right-click menu for position ``pos`` of the view (selecting what is under it)."""
        return context_menu(self, self.view, self.navigation, pos, self.context_actions, self.actions_by_name)

    def _place_overlays(self) -> None:
        geo = QRect(self.view.mapTo(self, QPoint(0, 0)), self.view.size())
        self.search_panel.move(geo.right() - self.search_panel.width() - 12, geo.top() + 12)
        self.progress_bar.setGeometry(geo.left() + geo.width() // 2 - 200, geo.top() + 16, 400, 44)
        self.minimap.reposition()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._place_overlays()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._menu_filter_installed:
            # installed last, so it sees right-clicks before filters other features put on the view
            self._menu_filter_installed = True
            self.view.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if obj is self.view and event.type() == QEvent.Type.ContextMenu and isinstance(event, QContextMenuEvent):
            self.last_menu = self.context_menu(event.pos())
            self.last_menu.popup(event.globalPos())
            return True
        return super().eventFilter(obj, event)

    def _status(self, message: str) -> None:
        window = self.window()
        if hasattr(window, "statusBar"):
            window.statusBar().showMessage(message, 8000)
