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
* signals ``scene_ready()`` (a newly built scene has been painted) and ``scope_changed(str)``.

Layout runs off the GUI thread (:class:`~onnxviz.ui.tasks.Task`) with progress and cancel
shown in a bar over the canvas.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect, QRectF, QTimer, Signal
from PySide6.QtGui import QAction, QContextMenuEvent, QCursor, QKeySequence, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMenu,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.document import Change, ChangeKind, Document
from onnxviz.model.graph.index import function_scope, parent_scope
from onnxviz.model.graph.opdocs import attribute_text
from onnxviz.model.layout.describe import box_tooltip, edge_tooltip, enterable_boxes, outer_boxes
from onnxviz.model.layout.drawable import Drawable
from onnxviz.model.layout.ghosts import Ghost, merge_ghosts
from onnxviz.model.layout.inline import EMBEDDED, Embedded, Holder, InlineLayout
from onnxviz.model.layout.options import LayoutOptions
from onnxviz.model.layout.scene import BoxKind, Scene
from onnxviz.model.layout.scope import CHAIN_DEPTH, WEIGHT_OPS
from onnxviz.model.process_tuning import building
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.selection import SelectionState
from onnxviz.ui.canvas import export, style
from onnxviz.ui.canvas.breadcrumb import Breadcrumb, scope_trail
from onnxviz.ui.canvas.legend import LegendStrip
from onnxviz.ui.canvas.marks import (
    LEVEL,
    Legend,
    Overlay,
    Scheme,
    group_box_of,
    overlay_colours,
    overlay_note,
    worst_badges,
)
from onnxviz.ui.canvas.menus import context_menu
from onnxviz.ui.canvas.minimap import Minimap, make_host
from onnxviz.ui.canvas.progress_overlay import LayoutProgress
from onnxviz.ui.canvas.search import SearchHit, SearchPanel
from onnxviz.ui.canvas.view import GraphView
from onnxviz.ui.statusbar import TaskProgress
from onnxviz.ui.tasks import Task, foreground_pool

LayoutWork = Callable[[Any, ProgressFn, CancelToken], Scene]   # (layout, progress, token) -> scene
FRAME_WAIT_MS = 250   # a new document's layout starts after the window's next frame, or after this


def default_layout_factory(index: Any, scope: str, expanded: Any, inline: frozenset[Holder] = frozenset()) -> Any:
    """The layout of one scope; the nodes in ``inline`` ((scope, node) pairs: of this scope or of a body
    shown inside it) show their bodies inside their boxes."""
    from onnxviz.model.layout.inline import InlineLayout

    return InlineLayout(index, scope, expanded, inline)


@dataclass
class _Job:
    label: str
    make_layout: Callable[[], Any] | None   # None: reuse the current layout object
    work: LayoutWork
    then: Callable[[], None] | None
    keep_view: bool
    announce: bool = True   # emit scene_ready once shown (not for label refreshes)
    after_frame: bool = False   # start once the window has painted (a newly opened document)
    scope: tuple[str, list[str]] | None = None  # (scope, trail) the laid-out graph belongs to


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
    """Breadcrumb, the graph view with its minimap, a find box and a layout progress bar."""

    scene_ready = Signal()
    scope_changed = Signal(str)
    ghost_selected = Signal(int)   # the key of the ghost box clicked or selected
    ghost_activated = Signal(int)  # the key of the ghost box double-clicked (or Enter on it)
    weight_row_clicked = Signal(str, str)  # (scope, value) of the weight row of a box that was clicked
    layout_failed = Signal(str)

    layout_factory: Callable[..., Any] = staticmethod(default_layout_factory)   # (index, scope, expanded[, inline])

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc: Document | None = None
        self.layout_obj: InlineLayout | None = None
        self.drawable: Drawable | None = None
        self.layout_options = LayoutOptions()   # View menu choices every layout of this canvas follows
        self._scope = ""
        self._trail: list[str] = [""]
        self._layout_index: Any = None
        self._task: Task | None = None
        self._pending: list[_Job] = []
        self._running: _Job | None = None   # the job of ``_task``
        self._retext_waiting: set[int] = set()   # nodes whose box texts change once the running job ends
        self._ready_pending = False
        self._unstarted: Task | None = None   # a layout waiting for the window's next frame
        self._group_selected = -1
        self._frame_selected = ""   # an expanded group selected by its frame's title (its path)
        self._inline: frozenset[Holder] = frozenset()   # nodes drawn with their bodies inside (shown scope or bodies)
        self._call: dict[str, str] = {}   # the attributes of the call a shown function body was entered from
        self._ghosts: Mapping[str, Sequence[Ghost]] = {}   # scope -> boxes of nodes only another model has
        self._describe_ghost: Callable[[int], str] = str   # a ghost's key -> its tooltip (html)
        self._badges: dict[tuple[str, int], str] = {}
        self._overlay: tuple[dict[tuple[str, int], float], str, tuple[str, int] | None, Scheme] | None = None
        self.shown_overlay: Overlay | None = None   # the overlay as drawn on the shown scene
        self.node_notes: list[Callable[[str, int], str]] = []
        self.context_actions: list[Callable[[QMenu], None]] = []
        self.status_progress: TaskProgress | None = None  # the window's, once the canvas is installed in one  # add other features' actions to the right-click menu
        self._build()

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        self.breadcrumb = Breadcrumb()
        self.breadcrumb.scope_clicked.connect(self.show_scope)
        self.view = GraphView()
        self.view_host = make_host(self.view)
        self.minimap = Minimap(self.view, self.view_host)
        self.minimap.hide()
        self.search_panel = SearchPanel(self)
        self.search_panel.hide()
        self.search_panel.activated.connect(self.jump_to)
        self.progress_bar = LayoutProgress(self)
        self.progress_bar.cancel.clicked.connect(self.cancel_layout)
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
        v = self.view
        v.box_clicked.connect(self._on_box_clicked)
        v.edge_clicked.connect(self._on_edge_clicked)
        v.empty_clicked.connect(self._on_empty_clicked)
        v.box_double_clicked.connect(self._on_box_double_clicked)
        v.box_toggled.connect(self._toggle_group_box)
        v.frame_toggled.connect(self.collapse_frame)
        v.frame_clicked.connect(self._on_frame_clicked)
        v.step_requested.connect(self.step)
        v.activate_requested.connect(self.activate_selected)
        v.back_requested.connect(self.go_up)
        v.painted.connect(self._on_painted)
        v.tooltip_provider = self._tooltip
        self._menu_filter_installed = False
        self.last_menu: QMenu | None = None

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

    # -- public API ------------------------------------------------------------------------
    @property
    def scope(self) -> str:
        """The scope currently shown."""
        return self._scope

    @property
    def legend(self) -> Legend | None:
        """The key of the overlay shown (in the strip above the graph), or None."""
        return self.legend_strip.legend

    @property
    def trail(self) -> list[str]:
        """The scopes of the breadcrumb, from the main graph to the shown one."""
        return list(self._trail)

    def set_document(self, doc: Document | None) -> None:
        """Show ``doc``'s main graph (laid out in the background); None clears the canvas."""
        if self.doc is not None:
            self.doc.selection.changed.disconnect(self._on_selection)
        self.doc = doc
        self._badges, self._overlay, self.shown_overlay = {}, None, None
        self.legend_strip.set_legend(None)
        self._ghosts = {}
        self.search_panel.set_index(doc.index if doc is not None else None)
        self.pages.setCurrentWidget(self.view_host if doc is not None or self.placeholder is None else self.placeholder)
        if doc is None:
            self.cancel_layout()
            self.layout_obj, self.drawable = None, None
            self.view.set_drawable(None)
            self._set_scope("", [""])
            return
        doc.selection.changed.connect(self._on_selection)
        self.layout_obj, self.drawable = None, None     # the previous model's drawing goes at once
        self.view.set_drawable(None)
        self._set_scope("", [""])                        # and its subgraph trail with it
        self.view.message = f"Laying out {len(doc.model.graph.node):,} nodes..."
        self._load_scope("", [""], expanded=None, keep_view=False, after_frame=True)

    def view_state(self) -> ViewState | None:
        """The view as the user left it (None before a graph is drawn)."""
        if self.doc is None or self.layout_obj is None:
            return None
        return ViewState(self._scope, list(self._trail), frozenset(self.layout_obj.expanded), self._inline,
                         self.view.scale, QPointF(self.view.center), not self.view.auto_view)

    def restore_view_state(self, state: ViewState) -> None:
        """After :meth:`set_document` with a new version of the model shown (a reload): the same graph, groups
        and inline bodies where the new model still has them, at the same zoom and place when the user had
        moved the view (else the new graph's opening view)."""
        if self.doc is None:
            return
        graphs = self.doc.index.graphs
        if state.scope not in graphs:
            return  # set_document shows the main graph
        trail = state.trail if all(s in graphs for s in state.trail) else scope_trail(state.scope)
        inline = frozenset((scope, node) for scope, node in state.inline
                           if scope in graphs and 0 <= node < len(graphs[scope].nodes))
        if state.placed:
            self.view.place(state.scale, state.center)
        self._load_scope(state.scope, trail, state.expanded, keep_view=state.placed, inline=inline)

    def show_scope(self, scope: str, then: Callable[[], None] | None = None) -> None:
        """Lay out and show graph ``scope`` of the document."""
        if self.doc is None or scope not in self.doc.index.graphs:
            return
        if scope == self._scope and self.layout_obj is not None:
            if then is not None:
                then()
            return
        trail = self._trail[: self._trail.index(scope) + 1] if scope in self._trail else scope_trail(scope)
        self._load_scope(scope, trail, expanded=None, keep_view=False, then=then)

    def enter_scope(self, scope: str) -> None:
        """Like :meth:`show_scope`, remembering where we came from for the breadcrumb."""
        if self.doc is None or scope not in self.doc.index.graphs:
            return
        if scope in self._trail:  # a function entered from itself: back to where it was, the trail does not grow
            trail = self._trail[: self._trail.index(scope) + 1]
        else:
            trail = self._trail + [scope] if scope.startswith("fn:") else scope_trail(scope)
        if scope.startswith("fn:"):
            self._call = self._selected_call(scope)
        self._load_scope(scope, trail, expanded=None, keep_view=False)

    def _weight_row_at(self, box: int) -> str:
        """The constant input whose row of ``box`` (a node's) was clicked last, '' if the click was elsewhere: the
        rows list the node's constant inputs in order (see ``scope._node_text``)."""
        d, where = self.drawable, getattr(self.view, "last_click", None)
        if self.doc is None or d is None or where is None or not d.scene.box_lines[box]:
            return ""
        row = int((where.y() - float(d.y0[box]) - style.HEADER_H - 2) // style.LINE_H)
        g = self.doc.index.graphs.get(self._scope)
        node = d.scene.box_ref[box].node
        if g is None or row < 0 or not 0 <= node < len(g.nodes) or self.layout_obj is None:
            return ""
        graph = getattr(self.layout_obj, "graph", None)
        consts = [x for x in g.nodes[node].input if x and graph is not None and x in graph.const_values]
        if row >= min(len(consts), len(d.scene.box_lines[box])):
            return ""
        name = consts[row]
        for _ in range(CHAIN_DEPTH):  # through the weight operators folded into the row, to the stored weight
            maker = g.producer.get(name, -1)
            if maker < 0 or g.nodes[maker].op_type not in WEIGHT_OPS or not g.nodes[maker].input:
                break
            name = g.nodes[maker].input[0]
        return name

    def _selected_call(self, scope: str) -> dict[str, str]:
        """The attributes (as texts) of the selected node when it calls the function ``scope``: the body then shows
        the caller's value beside each reference to one (``alpha (ref) = 0.5``)."""
        assert self.doc is not None
        state = self.doc.selection.state
        g = self.doc.index.graphs.get(state.scope)
        if g is None or not 0 <= state.node < len(g.nodes):
            return {}
        node = g.nodes[state.node]
        fn = self.doc.index.function_for(node)
        if fn is None or function_scope(fn.domain, fn.name, getattr(fn, "overload", "")) != scope:
            return {}
        return {a.name: attribute_text(a) for a in node.attribute}

    def leave_scope(self) -> None:
        """Back to the enclosing graph."""
        if len(self._trail) > 1:
            self.show_scope(self._trail[-2])

    def reveal_node(self, scope: str, node: int) -> None:
        """Show ``scope``, expand the groups hiding ``node``, then select it and bring it into view."""
        if self.doc is None or scope not in self.doc.index.graphs:
            return

        def select() -> None:
            assert self.doc is not None
            self.doc.selection.select_node(scope, node)
            self._follow_selection(center=True)

        def reveal() -> None:
            if self.drawable is not None and node in self.drawable.node_box:
                select()
            else:
                self._submit(_Job("Expanding", None, lambda lay, p, t: lay.reveal(node), select, True))

        self.show_scope(scope, then=reveal)

    def actual_size(self) -> None:
        """1:1 centred on the selected box; without one, on the view's centre unless nothing would be in
        sight there (after Fit the centre can fall between branches): then on the box nearest it."""
        view, d = self.view, self.drawable
        box = self.selected_box()
        if d is None or d.scene.n_boxes == 0:
            view.set_scale(1.0)
            return
        if box >= 0:
            view.place(1.0, self._box_rect(box).center())
            return
        view.set_scale(1.0)
        seen = view.visible_scene_rect()
        mid_x, mid_y = (d.x0 + d.x1) / 2, (d.y0 + d.y1) / 2
        if np.any((mid_x >= seen.left()) & (mid_x <= seen.right()) & (mid_y >= seen.top()) & (mid_y <= seen.bottom())):
            return   # a box (at least its middle) in sight
        c = view.center
        dx = np.maximum(np.maximum(d.x0 - c.x(), c.x() - d.x1), 0)
        dy = np.maximum(np.maximum(d.y0 - c.y(), c.y() - d.y1), 0)
        view.center_on(self._box_rect(int(np.argmin(dx * dx + dy * dy))).center())

    def fit(self) -> None:
        self.view.fit()

    def set_ghosts(self, ghosts: Mapping[str, Sequence[Ghost]], describe: Callable[[int], str] = str) -> None:
        """Draw ``ghosts`` (per scope) into every scene from now on, the shown one at once (nothing is
        laid out again); ``describe`` gives a ghost's tooltip. An empty mapping takes them away."""
        if not ghosts and not self._ghosts:
            return
        self._ghosts, self._describe_ghost = ghosts, describe
        self._submit(_Job("Marking", None, lambda lay, p, t: lay.scene, None, True))

    def select_ghost(self, key: int) -> bool:
        """Select ghost ``key``'s box in the shown drawing and bring it into view (the document's
        selection is cleared: a ghost is no node of it); False when no box shows it."""
        box = self.drawable.ghost_box.get(key, -1) if self.drawable is not None else -1
        if self.doc is None or box < 0:
            return False
        self.doc.selection.clear(self._scope)
        self._group_selected = box
        self._follow_selection(center=True)
        self.ghost_selected.emit(key)
        return True

    def reveal_ghost(self, scope: str, key: int, near: int = -1, missing: Callable[[], None] | None = None) -> None:
        """Show ``scope`` with the groups hiding node ``near`` (a neighbour of the ghost) open, then
        select ghost ``key``; ``missing`` is called when no box draws it even so (counted, not drawn)."""
        if self.drawable is not None and key in self.drawable.ghost_box and \
                (scope != self._scope or near < 0 or near in self.drawable.node_box):
            self.select_ghost(key)   # drawn here already, between its neighbours (or in a body shown inside its node)
            return

        def select() -> None:
            if not self.select_ghost(key) and missing is not None:
                missing()

        def reveal() -> None:
            if self.drawable is not None and (near < 0 or near in self.drawable.node_box):
                select()
            else:
                self._submit(_Job("Expanding", None, lambda lay, p, t: lay.reveal(near), select, True))

        self.show_scope(scope, then=reveal)

    def set_node_badges(self, badges: dict[tuple[str, int], str]) -> None:
        """Mark nodes with a small red ("error") or orange ("warning") badge."""
        self._badges = dict(badges)
        self._apply_marks()

    def set_overlay(self, values: dict[tuple[str, int], float] | None, title: str,
                    flagged: tuple[str, int] | None = None, scheme: Scheme = LEVEL) -> None:
        """Colour every op box by its value (with a legend); ``flagged`` gets a strong marker."""
        if values is None:
            self.clear_overlay()
            return
        self._overlay = (dict(values), title, flagged, scheme)
        self._apply_marks()
        if flagged is not None and flagged[0] == self._scope and self.drawable is not None:
            box = self._box_for_node(flagged[1])
            if box >= 0:
                self.view.ensure_visible(self._box_rect(box), min_scale=self.view.scale)

    def clear_overlay(self) -> None:
        self._overlay = None
        self._apply_marks()

    def export_image(self, path: str) -> None:
        """Draw the whole shown graph (not only the viewport) to ``path`` (.png or .svg)."""
        if self.drawable is None:
            from onnxviz.model.errors import OnnxvizError

            raise OnnxvizError("there is no graph to export.")
        options = self.view.options
        plain = type(options)(show_names=options.show_names, badges=options.badges, overlay=options.overlay,
                              flagged_box=options.flagged_box, enterable=options.enterable,
                              outer=options.outer)
        export.export_image(self.drawable, Path(path), options=plain)

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

    def set_layout_options(self, options: LayoutOptions) -> None:
        """Follow new layout choices: a new layout of the shown graph, or only new edge labels."""
        old, self.layout_options = self.layout_options, options
        if self.doc is None or self.layout_obj is None or old == options:
            return
        if replace(old, edge_names=options.edge_names) == options:  # only the labels change

            def relabel(lay: Any, progress: ProgressFn, token: CancelToken) -> Scene:
                lay.options = options   # in the job queue: never under a layout that is running
                return lay.relabel()

            self._submit(_Job("Edge labels", None, relabel, None, True, announce=False))
            return
        scope = self._scope if self._scope in self.doc.index.graphs else ""
        expanded = self.layout_obj.expanded if scope == self._scope else None
        self._load_scope(scope, self._trail if scope == self._scope else [""], expanded,
                         keep_view=old.direction == options.direction)  # turned: the opening view again

    def open_search(self) -> None:
        self._place_overlays()
        self.search_panel.open()

    def expand_group(self, path: str) -> None:
        self._submit(_Job("Expanding", None, lambda lay, p, t: lay.expand(path), None, True))

    def collapse_group(self, path: str) -> None:
        self._submit(_Job("Collapsing", None, lambda lay, p, t: lay.collapse(path), None, True))

    def expand_all(self, expand: bool = True) -> None:
        """Lay the shown graph out again with every name-scope group expanded (or every one collapsed)."""
        if self.doc is None or self.layout_obj is None:
            return
        groups = list(self.layout_obj.tree.paths) if expand else []
        self._load_scope(self._scope, self._trail, expanded=groups, keep_view=False)

    @property
    def busy(self) -> bool:
        return self._task is not None or bool(self._pending)

    # -- layout jobs -----------------------------------------------------------------------
    def _load_scope(self, scope: str, trail: list[str], expanded: Any, keep_view: bool,
                    then: Callable[[], None] | None = None, after_frame: bool = False,
                    inline: frozenset[Holder] = frozenset()) -> None:
        assert self.doc is not None
        index = self.doc.index
        factory = self.layout_factory
        self._inline = inline
        options = self.layout_options

        call = self._call if scope.startswith("fn:") else {}

        def make() -> Any:
            layout = factory(index, scope, expanded, inline) if inline else factory(index, scope, expanded)
            layout.options = options
            if call and hasattr(layout, "graph"):
                layout.graph.call = call
            return layout

        def finish() -> None:
            self._layout_index = index
            if then is not None:
                then()

        self._submit(_Job("Laying out graph", make,
                          lambda lay, p, t: lay.build(p, t), finish, keep_view, after_frame=after_frame,
                          scope=(scope, trail)))

    def rebuild(self) -> None:
        """Lay the shown graph out again (after an edit), keeping expanded groups and the view."""
        if self.doc is None:
            return
        scope = self._scope if self._scope in self.doc.index.graphs else ""
        expanded = self.layout_obj.expanded if self.layout_obj is not None and scope == self._scope else None
        trail = self._trail if scope == self._scope else [""]
        self._load_scope(scope, trail, expanded, keep_view=True, inline=self._inline if scope == self._scope
                         else frozenset())

    def show_body_inline(self, node: int, on: bool = True, scope: str | None = None) -> None:
        """Draw the bodies of node ``node`` (an If, Loop or Scan of the shown scope, or of ``scope``: a body
        drawn inside a node here) inside its box, or stop."""
        scope = self._scope if scope is None else scope
        if self.doc is None or self.layout_obj is None or not self.bodies_of(node, scope):
            return
        holder = (scope, node)
        inline = self._inline | {holder} if on else self._inline - {holder}
        self._load_scope(self._scope, self._trail, self.layout_obj.expanded, keep_view=True,
                         inline=frozenset(inline))

    def bodies_of(self, node: int, scope: str | None = None) -> list[str]:
        """The scopes of the bodies (If branches, Loop and Scan bodies) of node ``node`` of the shown scope
        (or of ``scope``)."""
        g = self.doc.index.graphs.get(self._scope if scope is None else scope) if self.doc is not None else None
        return [body for i, _, body in g.children if i == node] if g is not None else []

    @property
    def inline_nodes(self) -> frozenset[int]:
        """Nodes of the shown scope drawn with their bodies inside."""
        return frozenset(node for scope, node in self._inline if scope == self._scope)

    @property
    def inline_holders(self) -> frozenset[Holder]:
        """(scope, node) of every node drawn with its bodies inside: of the shown scope and of its bodies."""
        return self._inline

    def box_holder(self, box: int) -> Holder | None:
        """(scope, node) of the If/Loop/Scan node a box of the shown drawing stands for (its own or in a
        body drawn inside a node), or None."""
        if self.drawable is None or not 0 <= box < self.drawable.scene.n_boxes:
            return None
        inside = self.embedded_box(box)
        scope, ref = (inside[0].scope, inside[0].scene.box_ref[inside[1]]) if inside is not None else \
            (self._scope, self.drawable.scene.box_ref[box])
        if ref.kind != BoxKind.OP or ref.node < 0 or not self.bodies_of(ref.node, scope):
            return None
        return scope, ref.node

    @property
    def _bodies_drawn(self) -> list[Embedded]:
        """The bodies drawn inside their nodes in the shown layout (none before one is made)."""
        return self.layout_obj.embedded if self.layout_obj is not None else []

    def embedded_box(self, box: int) -> tuple[Embedded, int] | None:
        """The body a box of the shown drawing belongs to (drawn inside its node) and its row in that
        body's own scene; None for the shown scope's own boxes."""
        for emb in self._bodies_drawn:
            if emb.box_start <= box < emb.box_end:
                return emb, box - emb.box_start
        return None

    def embedded_edge(self, edge: int) -> tuple[Embedded, int] | None:
        for emb in self._bodies_drawn:
            if emb.edge_start <= edge < emb.edge_end:
                return emb, edge - emb.edge_start
        return None

    def _inline_scopes(self) -> set[str]:
        return {emb.scope for emb in self._bodies_drawn}

    def relabel(self) -> None:
        """Edge labels again, now that inferred shapes arrived (in the background, after any running job)."""
        if self.doc is None or (self.layout_obj is None and self._task is None):
            return
        self._submit(_Job("Edge labels", None, lambda lay, p, t: lay.relabel(), None, True, announce=False))

    def cancel_layout(self) -> None:
        self._pending = []
        self._retext_waiting = set()   # like the queued edge labels (a new layout reads the new names)
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self.progress_bar.hide()

    def _submit(self, job: _Job) -> None:
        if job.make_layout is not None:          # a fresh layout replaces whatever is running
            self.cancel_layout()
        elif self._task is not None:             # edits of the current layout wait their turn
            self._pending.append(job)
            return
        elif self.layout_obj is None:
            return
        self._start(job)

    def _start(self, job: _Job) -> None:
        current = self.layout_obj

        def work(progress: ProgressFn, token: CancelToken) -> tuple[Any, Drawable]:
            # the layout makes many acyclic objects (123k nodes: collections took ~15% of its CPU): none runs
            # meanwhile, and what it made is kept until the next layout, so later collections need not walk it
            with building():
                layout = job.make_layout() if job.make_layout is not None else current
                assert layout is not None   # jobs without a layout of their own start only once there is one
                scene = job.work(layout, progress, token)
                ghosts = self._ghosts   # as they are now: set_ghosts queues another job after this one
                if ghosts:
                    scene = merge_ghosts(scene, ghosts, layout.embedded, layout.options.names)
                token.check()
                drawable = Drawable(scene)
            return layout, drawable

        task = Task(work, job.label, parent=self)   # dies with the canvas: no late deliveries
        task.progress.connect(self.progress_bar.set_progress)
        task.finished.connect(lambda result: self._job_done(task, job, result))
        task.failed.connect(lambda exc, tb: self._job_failed(task, job, exc))
        task.cancelled.connect(lambda: self._job_ended(task))
        self._task, self._running = task, job
        if self.status_progress is not None:  # in the main window: progress and cancel in its status bar
            if job.announce:
                self.status_progress.track(task)
        else:
            QTimer.singleShot(300, self, lambda: self._show_progress(task))
        if job.after_frame and self.view.isVisible():
            self._start_after_frame(task)
        else:
            task.start(foreground_pool())

    def _start_after_frame(self, task: Task) -> None:
        """Start ``task`` once the window has painted what a new document changed (panels, docks).

        The layout thread runs Python; while it does, the GUI thread waits for the GIL each time
        Qt calls back into Python, and the first frame of a new document is hundreds of such calls
        (123k nodes: a ~150 ms pause with the thread running, ~40 ms without)."""
        self._unstarted = task
        QTimer.singleShot(FRAME_WAIT_MS, self, self._start_unstarted)  # no frame (minimised): start anyway

    def _start_unstarted(self) -> None:
        task, self._unstarted = self._unstarted, None
        if task is not None and task is self._task and not task.token.cancelled:
            task.start(foreground_pool())

    def _show_progress(self, task: Task) -> None:
        """Without a status bar that tracks tasks, a progress bar with Cancel over the canvas."""
        if self._task is task:
            self.progress_bar.start(task.label)
            self._place_overlays()

    def _job_done(self, task: Task, job: _Job, result: tuple[Any, Drawable]) -> None:
        if self._task is not task:
            return
        follow = self._selection_in_sight()   # before the new layout replaces the boxes it is looked up in
        self.layout_obj, drawable = result
        if job.scope is not None:  # before showing: badges, overlay and selection are looked up per scope
            self._set_scope(*job.scope)
        self._show(drawable, keep_view=job.keep_view, announce=job.announce, follow=follow)
        if job.then is not None:
            job.then()
        self._job_ended(task)

    def _job_failed(self, task: Task, job: _Job, exc: object) -> None:
        if self._task is not task:
            return
        message = getattr(exc, "message", None) or f"The graph could not be laid out: {exc}."
        self._status(message)
        if job.make_layout is not None:   # never leave the previous document's drawing on screen
            self.layout_obj, self.drawable = None, None
            self.view.set_drawable(None)
        self.view.message = message
        self.view.update()
        self._job_ended(task)
        self.layout_failed.emit(message)

    def _job_ended(self, task: Task) -> None:
        if self._task is not task:
            return
        self._task = None
        self.progress_bar.hide()
        while self._pending:
            job = self._pending.pop(0)
            if job.make_layout is not None or self.layout_obj is not None:  # a failed layout left none to edit
                self._start(job)
                break
        if self._task is None and self._retext_waiting:
            nodes, self._retext_waiting = frozenset(self._retext_waiting), set()
            if not self._apply_retext(nodes):
                self.rebuild()

    def _selection_in_sight(self) -> bool:
        box = self.selected_box()
        return box >= 0 and self.view.visible_scene_rect().intersects(self._box_rect(box))

    def _show(self, drawable: Drawable, keep_view: bool, announce: bool, follow: bool = False) -> None:
        """``follow``: the selection was in sight; it stays in sight in the new layout (a new opening view,
        as after turning the layout, shows it too)."""
        self.drawable = drawable
        self.view.message = "" if drawable.scene.n_boxes else "This graph has no nodes, inputs or outputs."
        self._group_selected = -1
        self._frame_selected = ""
        if self.doc is not None:
            self.view.options.enterable = enterable_boxes(self.doc.index, drawable.scene)
            self.view.options.outer = outer_boxes(self.doc.index, drawable.scene) | frozenset(
                emb.box_start + b for emb in self._bodies_drawn
                for b in outer_boxes(self.doc.index, emb.scene))
            self.view.options.body_toggles = self._body_toggles(drawable)
        # labels that arrived before the user moved the view laid the graph out again: its opening view again
        keep = keep_view and (announce or not self.view.auto_view)
        self.view.set_drawable(drawable, keep_view=keep)
        self._apply_marks()
        self._follow_selection(center=follow or not keep)
        self._place_overlays()
        if announce:
            self._ready_pending = True
            if not self.view.isVisible():
                QTimer.singleShot(0, self, self._on_painted)

    def _on_painted(self) -> None:
        if self._unstarted is not None:
            QTimer.singleShot(0, self, self._start_unstarted)  # once this frame is complete
        if self._ready_pending:
            self._ready_pending = False
            QTimer.singleShot(0, self, self.scene_ready.emit)

    def _body_toggles(self, drawable: Drawable) -> dict[int, bool]:
        """Boxes of the shown scope's If/Loop/Scan nodes: whether their bodies are drawn inside them."""
        g = self.doc.index.graphs.get(self._scope) if self.doc is not None else None
        if g is None or not g.children:
            return {}
        holders = {i for i, _, _ in g.children}
        toggles = {box: (self._scope, node) in self._inline for node, box in drawable.node_box.items()
                   if node in holders}
        for emb in self._bodies_drawn:   # If/Loop/Scan nodes inside the bodies drawn here
            inner = self.doc.index.graphs.get(emb.scope) if self.doc is not None else None
            for node in {i for i, _, _ in inner.children} if inner is not None else ():
                local = emb.scene.box_of_node(node)
                if local >= 0 and emb.scene.box_ref[local].node == node:
                    toggles[emb.box_start + local] = (emb.scope, node) in self._inline
        return toggles

    def _set_scope(self, scope: str, trail: list[str]) -> None:
        changed = scope != self._scope
        self._scope, self._trail = scope, trail
        self.breadcrumb.set_trail(self.doc.index if self.doc is not None else None, trail)
        if changed:
            self.scope_changed.emit(scope)

    # -- clicks ---------------------------------------------------------------------------
    def _on_box_clicked(self, box: int) -> None:
        if self.doc is None or self.drawable is None:
            return
        inside = self.embedded_box(box)
        if inside is not None:   # a box of a body drawn inside its node: select it in the body's scope
            emb, local = inside
            inner = emb.scene.box_ref[local]
            if inner.kind == BoxKind.OP:
                self.doc.selection.select_node(emb.scope, inner.node)
            elif inner.kind != BoxKind.GROUP:
                self.doc.selection.select_value(emb.scope, inner.value)
            return
        ref = self.drawable.scene.box_ref[box]
        if ref.kind == BoxKind.OP:
            self.doc.selection.select_node(self._scope, ref.node)
            weight = self._weight_row_at(box)
            if weight:
                self.weight_row_clicked.emit(self._scope, weight)
        elif ref.kind == BoxKind.GHOST and ref.group:   # the ghosts inside a collapsed group: open it
            self.expand_group(ref.group)
        elif ref.kind == BoxKind.GHOST:
            self.select_ghost(ref.node)
        elif ref.kind == BoxKind.GROUP:
            self.doc.selection.clear(self._scope)
            self._group_selected = box
            self._follow_selection(center=False)
        else:
            self.doc.selection.select_value(self._scope, ref.value)

    def _on_edge_clicked(self, edge: int) -> None:
        if self.doc is not None and self.drawable is not None:
            inside = self.embedded_edge(edge)
            if inside is not None:
                self.doc.selection.select_value(inside[0].scope, inside[0].scene.edge_value[inside[1]])
                return
            if self.drawable.scene.edge_value[edge]:   # a ghost's edges stand for no value of the document
                self.doc.selection.select_value(self._scope, self.drawable.scene.edge_value[edge])

    def _on_empty_clicked(self) -> None:
        if self.doc is not None:
            self._group_selected = -1
            self._frame_selected = ""
            self.doc.selection.clear(self._scope)
            self._follow_selection(center=False)

    def _on_frame_clicked(self, frame: int) -> None:
        """The title of an expanded group's frame selects the group, as clicking it collapsed does."""
        if self.doc is None or self.drawable is None:
            return
        path = self.drawable.scene.group_path[frame]
        if path.startswith(EMBEDDED):   # a body drawn inside its node: no group of this graph
            return
        self.doc.selection.clear(self._scope)
        self._group_selected, self._frame_selected = -1, path
        self._follow_selection(center=False)

    def _on_box_double_clicked(self, box: int) -> None:
        if self.doc is None or self.drawable is None:
            return
        inside = self.embedded_box(box)
        if inside is not None:   # open the body, this node selected in it
            emb, local = inside
            node = emb.scene.box_ref[local].node
            if node >= 0:
                self.reveal_node(emb.scope, node)
            else:
                self.enter_scope(emb.scope)
            return
        ref = self.drawable.scene.box_ref[box]
        if ref.kind == BoxKind.GROUP:
            self.expand_group(ref.group)
        elif ref.kind == BoxKind.GHOST and not ref.group:
            self.ghost_activated.emit(ref.node)
        elif ref.kind == BoxKind.OP:
            targets = self.subgraphs_of(ref.node)
            if len(targets) == 1:
                self.enter_scope(targets[0][1])
            elif targets:
                self._choose_subgraph(targets)

    def subgraphs_of(self, node: int) -> list[tuple[str, str]]:
        """(label, scope) of each graph a node of the shown scope leads into: bodies and local functions."""
        if self.doc is None:
            return []
        index = self.doc.index
        g = index.graphs.get(self._scope)
        if g is None or not 0 <= node < len(g.nodes):
            return []
        out = [(label, scope) for i, label, scope in g.children if i == node]
        fn = index.function_for(g.nodes[node])
        if fn is not None:
            out.append((f"function {fn.name}", function_scope(fn.domain, fn.name, getattr(fn, "overload", ""))))
        return out

    def scope_opener(self, scope: str) -> Callable[[], None]:
        """A slot that enters ``scope`` (for menu actions)."""
        return lambda: self.enter_scope(scope)

    def _choose_subgraph(self, targets: list[tuple[str, str]]) -> None:
        menu = QMenu(self)
        for label, scope in targets:
            menu.addAction(f"Enter {label}", self.scope_opener(scope))
        menu.popup(QCursor.pos())

    def activate_selected(self) -> None:
        """Enter: open the selected box like a double-click does."""
        box = self.selected_box()
        if box >= 0:
            self._on_box_double_clicked(box)

    def _tooltip(self, box: int, edge: int) -> str:
        if self.doc is None or self.drawable is None:
            return ""
        inside = self.embedded_box(box) if box >= 0 else self.embedded_edge(edge)
        if inside is not None:
            emb, local = inside
            return box_tooltip(self.doc.index, emb.scene, local) if box >= 0 else \
                edge_tooltip(self.doc.index, emb.scene, local)
        if box >= 0 and self.drawable.scene.box_kind[box] == BoxKind.GHOST:
            ref = self.drawable.scene.box_ref[box]
            if ref.group:
                return f"<b>{escape(self.drawable.scene.box_title[box])}</b> inside {escape(ref.group)}: click to open it"
            return self._describe_ghost(ref.node)
        if box >= 0:
            text = box_tooltip(self.doc.index, self.drawable.scene, box)
            node = int(self.drawable.box_node[box])
            group = self.drawable.scene.box_kind[box] == BoxKind.GROUP
            notes = [note(self._scope, node) for note in self.node_notes] if node >= 0 else []
            if self.shown_overlay is not None and (node >= 0 or group):
                notes.append(overlay_note(self.shown_overlay, box, group))
            return "<br>".join([text, *filter(None, notes)])
        return edge_tooltip(self.doc.index, self.drawable.scene, edge)

    def _toggle_group_box(self, box: int) -> None:
        """The +/- of a box: a collapsed group opens; a node with bodies shows or hides them inside it."""
        if self.drawable is None:
            return
        holder = self.box_holder(box)
        if holder is not None:
            self.show_body_inline(holder[1], holder not in self._inline, holder[0])
        elif self.embedded_box(box) is None and self.drawable.scene.box_ref[box].kind == BoxKind.GROUP:
            self.expand_group(self.drawable.scene.box_ref[box].group)

    def collapse_frame(self, frame: int) -> None:
        """The '-' of a frame: a group closes; a node's bodies (its frame or one body's) go back inside it."""
        if self.drawable is None:
            return
        holder = self.frame_holder(frame)
        if holder is not None:
            self.show_body_inline(holder[1], False, holder[0])
        elif not self.drawable.scene.group_path[frame].startswith(EMBEDDED):   # a body's own group: kept open
            self.collapse_group(self.drawable.scene.group_path[frame])

    def frame_holder(self, frame: int) -> Holder | None:
        """(scope, node) of the node whose bodies frame ``frame`` holds (around them all, or around one
        body; the node of the shown scope or of a body drawn here), else None."""
        holder = self.layout_obj.frame_holders.get(frame) if self.layout_obj is not None else None
        for emb in self._bodies_drawn:
            if emb.frame == frame:
                holder = (emb.parent, emb.node)
        return holder

    # -- selection -------------------------------------------------------------------------
    def _on_selection(self, state: SelectionState) -> None:
        if self.doc is None:
            return
        if state.scope != self._scope and state.scope in self._inline_scopes():   # drawn inside its node here
            self._group_selected = -1
            self._frame_selected = ""
            self._follow_selection(center=True)
            return
        if state.scope != self._scope and not state.is_empty and state.scope in self.doc.index.graphs:
            self.show_scope(state.scope, then=lambda: self._follow_selection(center=True))
            return
        self._group_selected = -1
        self._frame_selected = ""
        self._follow_selection(center=True)

    def selected_box(self) -> int:
        """Row of the box showing the selected node (or its group box), or -1."""
        if self.doc is None or self.drawable is None:
            return -1
        state = self.doc.selection.state
        if state.scope != self._scope:
            return self._embedded_selection(state.scope, state.node, state.value)
        if state.node >= 0:
            return self._box_for_node(state.node)
        if state.value:
            return self.drawable.value_box.get(state.value, -1)
        return self._group_selected

    def _embedded_selection(self, scope: str, node: int, value: str) -> int:
        """Row of the box showing a node or value of a body drawn inside its node, or -1."""
        for emb in self._bodies_drawn:
            if emb.scope != scope:
                continue
            refs = emb.scene.box_ref
            local = emb.scene.box_of_node(node) if node >= 0 else \
                next((b for b, r in enumerate(refs) if r.kind != BoxKind.OP and r.value == value), -1)
            if 0 <= local < len(refs) and (node < 0 or refs[local].node == node):
                return emb.box_start + local
        return -1

    def selected_nodes(self) -> list[int]:
        """Positions, in the shown scope, of the selected node or of every node of the selected group."""
        if self.doc is None:
            return []
        state = self.doc.selection.state
        if state.node >= 0:
            return [state.node] if state.scope == self._scope else []
        if self._frame_selected and self.layout_obj is not None and not state.value:
            return list(self.layout_obj.group_nodes(self._frame_selected))
        box = self._group_selected
        if box < 0 or self.layout_obj is None or self.drawable is None or state.value \
                or self.drawable.scene.box_kind[box] != BoxKind.GROUP:   # a ghost stands for no node here
            return []
        return list(self.layout_obj.group_nodes(self.drawable.scene.box_ref[box].group))

    def _follow_selection(self, center: bool) -> None:
        d, opts = self.drawable, self.view.options
        if d is None or self.doc is None:
            return
        box = self.selected_box()
        state = self.doc.selection.state
        opts.selected_box = box
        frames = d.scene.group_path
        opts.selected_frame = frames.index(self._frame_selected) if self._frame_selected in frames else -1
        if state.value and state.scope == self._scope:
            edges = np.flatnonzero(np.array([v == state.value for v in d.scene.edge_value], bool))
            opts.selected_edges, opts.neighbour_boxes = edges, self._reader_boxes(state.value)
        elif state.value and state.scope in self._inline_scopes():
            embedded = [e for e in self._bodies_drawn if e.scope == state.scope]
            opts.selected_edges = np.array([emb.edge_start + k for emb in embedded
                                            for k, v in enumerate(emb.scene.edge_value) if v == state.value], np.int64)
            opts.neighbour_boxes = np.zeros(0, np.int64)
        elif box >= 0:
            producers, consumers = d.neighbours(box)
            opts.selected_edges = d.edges_of_box(box)
            opts.neighbour_boxes = np.concatenate([producers, consumers])
        else:
            opts.selected_edges = opts.neighbour_boxes = np.zeros(0, np.int64)
        if center:
            target = self._box_rect(box) if box >= 0 else self._edges_rect(opts.selected_edges)
            if target is None and len(opts.neighbour_boxes):   # e.g. an initializer: show who reads it
                target = self._box_rect(int(opts.neighbour_boxes[0]))
            if target is not None:
                self.view.ensure_visible(target, min_scale=min(self.view.scale, 0.6))
        self.view.update()

    def _reader_boxes(self, value: str) -> np.ndarray:
        """Boxes of the nodes reading ``value`` (weights are drawn inside their readers, not as edges)."""
        g = self.doc.index.graphs.get(self._scope) if self.doc is not None else None
        if g is None:
            return np.zeros(0, np.int64)
        boxes = {self._box_for_node(n) for n in g.consumers_of(value)}
        return np.array(sorted(b for b in boxes if b >= 0), np.int64)

    def step(self, direction: str) -> None:
        """Move the selection: up = a producer, down = a consumer, left/right = neighbour in the same row
        (left to right: left = a producer, right = a consumer, up/down = neighbour in the same column)."""
        d = self.drawable
        box = self.selected_box()
        if d is None or box < 0:
            return
        producers, consumers = d.neighbours(box)
        s = d.scene
        # along: the way data flows; across: the row (a column when the graph flows left to right)
        across, along, size = (d.y0, d.x0, s.box_w) if s.direction == "LR" else (d.x0, d.y0, s.box_h)
        width = s.box_h if s.direction == "LR" else s.box_w
        if s.direction == "LR":
            direction = {"left": "up", "right": "down", "up": "left", "down": "right"}[direction]
        if direction in ("up", "down"):
            candidates = producers if direction == "up" else consumers
            if not len(candidates):
                return
            centre = across[box] + width[box] / 2
            target = int(candidates[np.argmin(np.abs(across[candidates] + width[candidates] / 2 - centre))])
        else:
            same_row = np.flatnonzero(np.abs(along - along[box]) < max(float(size[box]) / 2, 1.0))
            delta = across[same_row] - across[box]
            side = same_row[delta < 0] if direction == "left" else same_row[delta > 0]
            if not len(side):
                return
            target = int(side[np.argmin(np.abs(across[side] - across[box]))])
        self._on_box_clicked(target)
        self._follow_selection(center=True)

    # -- badges and overlay ------------------------------------------------------------------
    def _box_for_node(self, node: int) -> int:
        d = self.drawable
        if d is None:
            return -1
        box = d.node_box.get(node, -1)
        if box < 0 and self.layout_obj is not None:
            box = group_box_of(d, self.layout_obj, node)
        return box

    def _body_rows(self) -> dict[str, Callable[[int], int]]:
        """For each body drawn inside its node: its node -> the row of the box showing it (-1: none)."""
        def row_of(emb: Embedded) -> Callable[[int], int]:
            def row(node: int) -> int:
                local = emb.scene.box_of_node(node)
                ok = 0 <= local < emb.scene.n_boxes and emb.scene.box_ref[local].node == node
                return emb.box_start + local if ok else -1
            return row

        return {emb.scope: row_of(emb) for emb in self._bodies_drawn}

    def _apply_marks(self) -> None:
        opts = self.view.options
        d = self.drawable
        opts.badges, opts.overlay, opts.flagged_box = {}, None, -1
        self.shown_overlay = None
        if self._overlay is None:
            self.legend_strip.set_legend(None)
        if d is not None:
            opts.badges = worst_badges(self._badges, self._scope, self._box_for_node, d)
            if self._overlay is not None:
                values, title, flagged, scheme = self._overlay
                shown = overlay_colours(d, values, self._scope, self._box_for_node, title, scheme, self._body_rows())
                opts.overlay, self.shown_overlay = shown.rgba, shown
                self.legend_strip.set_legend(shown.legend)   # kept while a scene is being made: no jump
                if flagged is not None and flagged[0] == self._scope:
                    opts.flagged_box = self._box_for_node(flagged[1])
        self.view.update()

    # -- search ------------------------------------------------------------------------------
    def jump_to(self, hit: SearchHit) -> None:
        """Show and select a search result (a node, or a value via its producer)."""
        if self.doc is None:
            return
        if hit.node >= 0:
            self.reveal_node(hit.scope, hit.node)
            return
        g = self.doc.index.graphs.get(hit.scope)
        producer = g.producer.get(hit.value, -1) if g is not None else -1
        if producer >= 0:
            self.reveal_node(hit.scope, producer)
            return
        doc = self.doc
        readers = g.consumers_of(hit.value) if g is not None else []

        def select() -> None:
            doc.selection.select_value(hit.scope, hit.value)
            self._follow_selection(center=True)

        def reveal_reader() -> None:
            if self.drawable is not None and readers and readers[0] not in self.drawable.node_box:
                self._submit(_Job("Expanding", None, lambda lay, p, t: lay.reveal(readers[0]), select, True))
            else:
                select()

        self.show_scope(hit.scope, then=reveal_reader)

    # -- geometry helpers ----------------------------------------------------------------------
    def _box_rect(self, box: int) -> QRectF:
        d = self.drawable
        assert d is not None
        return QRectF(float(d.x0[box]), float(d.y0[box]), float(d.scene.box_w[box]), float(d.scene.box_h[box]))

    def _edges_rect(self, edges: np.ndarray) -> QRectF | None:
        d = self.drawable
        if d is None or not len(edges):
            return None
        pts = np.concatenate([d.scene.edge_polyline(int(e)) for e in edges[:50]])
        x0, y0 = pts.min(axis=0)
        x1, y1 = pts.max(axis=0)
        return QRectF(float(x0), float(y0), float(x1 - x0), float(y1 - y0))

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
            self.last_menu = context_menu(self, event.pos())
            self.last_menu.popup(event.globalPos())
            return True
        return super().eventFilter(obj, event)

    def _status(self, message: str) -> None:
        window = self.window()
        if hasattr(window, "statusBar"):
            window.statusBar().showMessage(message, 8000)

    def go_up(self) -> None:
        """Back to where the breadcrumb says we came from (the enclosing graph)."""
        if len(self._trail) > 1:
            self.leave_scope()
        elif self._scope:
            self.show_scope(parent_scope(self._scope))

    def on_model_changed(self, change: Change) -> None:
        if change.kind.changes_model and change.nodes is not None and self._retext(change.nodes):
            return
        if change.kind.changes_model:
            self.rebuild()
        elif change.kind == ChangeKind.VALIDATED:
            self.relabel()

    def _retext(self, nodes: frozenset[int]) -> bool:
        """After an edit of names, doc strings or attribute values alone: the changed boxes' texts,
        without laying the graph out again (at 123k nodes the layout thread takes the GIL for ~1 s in
        bursts, and the window stutters meanwhile). False when a layout is needed after all."""
        if not nodes:
            return True   # e.g. metadata: nothing drawn changed
        if self._task is not None:   # edge labels or an expansion of this layout: after it; a new layout: again
            if self._running is None or self._running.make_layout is not None:
                return False
            self._retext_waiting |= nodes
            return True
        return self._apply_retext(nodes)

    def _apply_retext(self, nodes: frozenset[int]) -> bool:
        layout, drawable = self.layout_obj, self.drawable
        if self.doc is None or layout is None or drawable is None or self._scope != "" \
                or self.doc.index is not layout.index:
            return False
        scene = layout.refresh_nodes(nodes)
        if scene is None or scene.box_ref is not drawable.scene.box_ref:  # not the scene drawn: draw anew
            return False
        if scene is not drawable.scene:
            drawable.retext(scene)
            self.view.update()
        return True
