"""Moving around the model on the canvas: which graph (scope) is shown and laid out how (groups opened,
bodies drawn inside their nodes, the View menu's layout choices), entering bodies and functions and going
back, revealing a node, a ghost or a search hit (opening the groups hiding it), double-clicks and +/-."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QMenu, QWidget

from onnxviz.model.graph.index import function_scope, parent_scope
from onnxviz.model.graph.opdocs import attribute_text
from onnxviz.model.layout.drawable import Drawable
from onnxviz.model.layout.inline import EMBEDDED, Holder, InlineLayout
from onnxviz.model.layout.options import LayoutOptions
from onnxviz.model.layout.scene import BoxKind, Scene
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.ui.canvas.breadcrumb import scope_trail
from onnxviz.ui.canvas.jobs import Job, LayoutJobs, edit_job
from onnxviz.ui.canvas.search import SearchHit
from onnxviz.ui.canvas.selecting import SelectionFollower
from onnxviz.ui.canvas.shown import ShownGraph


def default_layout_factory(index: Any, scope: str, expanded: Any, inline: frozenset[Holder] = frozenset()) -> Any:
    """The layout of one scope; the nodes in ``inline`` ((scope, node) pairs: of this scope or of a body
    shown inside it) show their bodies inside their boxes."""
    return InlineLayout(index, scope, expanded, inline)


class ScopeNavigator(QObject):
    """Which graph is laid out and shown, and how; every layout it asks for goes through ``jobs``."""

    ghost_activated = Signal(int)  # the key of the ghost box double-clicked (or Enter on it)

    def __init__(self, shown: ShownGraph, jobs: LayoutJobs, selection: SelectionFollower, parent: QWidget) -> None:
        super().__init__(parent)
        self.shown, self.jobs, self.selection, self._menu_parent = shown, jobs, selection, parent
        self.layout_factory: Callable[..., Any] = default_layout_factory   # (index, scope, expanded[, inline])
        self.options = LayoutOptions()   # View menu choices every layout follows
        self._call: dict[str, str] = {}   # the attributes of the call a shown function body was entered from
        # the inferred types (one mapping per validation result) the last layout or edge-label job asked for
        # reads: edge labels are made from them and the declared types alone
        self._labels_from: object = None

    # -- layouts -----------------------------------------------------------------------------------------
    def load_scope(self, scope: str, trail: list[str], expanded: Any, keep_view: bool,
                   then: Callable[[], None] | None = None, after_frame: bool = False,
                   inline: frozenset[Holder] = frozenset()) -> None:
        """Lay out graph ``scope`` (breadcrumb ``trail``) with groups ``expanded`` (None: the opening ones) and the
        bodies of ``inline`` drawn inside their nodes, then show it and call ``then``."""
        assert self.shown.doc is not None
        index, factory, options = self.shown.doc.index, self.layout_factory, self.options
        self.shown.inline = inline
        self._labels_from = self.shown.doc.inferred_types
        call = self._call if scope.startswith("fn:") else {}

        def make() -> Any:
            layout = factory(index, scope, expanded, inline) if inline else factory(index, scope, expanded)
            layout.options = options
            if call and hasattr(layout, "graph"):
                layout.graph.call = call
            return layout

        self.jobs.submit(Job("Laying out graph", make, lambda lay, p, t: lay.build(p, t), then, keep_view,
                             after_frame=after_frame, scope=(scope, trail)))

    def rebuild(self) -> None:
        """Lay the shown graph out again (after an edit), keeping expanded groups and the view."""
        shown = self.shown
        if shown.doc is None:
            return
        same = shown.scope in shown.doc.index.graphs
        expanded = shown.layout.expanded if shown.layout is not None and same else None
        self.load_scope(shown.scope if same else "", shown.trail if same else [""], expanded, keep_view=True,
                        inline=shown.inline if same else frozenset())

    def relabel(self) -> None:
        """Edge labels again, now that inferred shapes arrived (in the background, after any running job)."""
        if self.shown.doc is None or (self.shown.layout is None and self.jobs.task is None):
            return
        self._labels_from = self.shown.doc.inferred_types
        self.jobs.submit(edit_job("Edge labels", lambda lay, p, t: lay.relabel(), announce=False))

    def follow_validation(self) -> None:
        """A validation result came: edge labels again unless its inferred types are those the shown layout or
        a queued job reads already (the first problems come with the types there were: light_resnet50's open
        made a label job and a frame more before its screenshot), or a new document's layout, waiting for the
        window's frame, will read them as it starts."""
        doc = self.shown.doc
        if doc is None or doc.inferred_types is self._labels_from:
            return
        if self.jobs.unstarted is not None:
            self._labels_from = doc.inferred_types
            return
        self.relabel()

    def set_options(self, options: LayoutOptions) -> None:
        """Follow new layout choices: a new layout of the shown graph, or only new edge labels."""
        old, self.options = self.options, options
        shown = self.shown
        if shown.doc is None or shown.layout is None or old == options:
            return
        if replace(old, edge_names=options.edge_names) == options:  # only the labels change

            def relabel(lay: Any, progress: ProgressFn, token: CancelToken) -> Scene:
                lay.options = options   # in the job queue: never under a layout that is running
                return lay.relabel()

            self.jobs.submit(edit_job("Edge labels", relabel, announce=False))
            return
        same = shown.scope in shown.doc.index.graphs
        self.load_scope(shown.scope if same else "", shown.trail if same else [""],
                        shown.layout.expanded if same else None,
                        keep_view=old.direction == options.direction)  # turned: the opening view again

    def expand_group(self, path: str) -> None:
        self.jobs.submit(edit_job("Expanding", lambda lay, p, t: lay.expand(path)))

    def collapse_group(self, path: str) -> None:
        self.jobs.submit(edit_job("Collapsing", lambda lay, p, t: lay.collapse(path)))

    def expand_all(self, expand: bool = True) -> None:
        """Lay the shown graph out again with every name-scope group expanded (or every one collapsed)."""
        if self.shown.doc is None or self.shown.layout is None:
            return
        groups = list(self.shown.layout.tree.paths) if expand else []
        self.load_scope(self.shown.scope, self.shown.trail, expanded=groups, keep_view=False)

    # -- scopes --------------------------------------------------------------------------------------------
    def show_scope(self, scope: str, then: Callable[[], None] | None = None) -> None:
        """Lay out and show graph ``scope`` of the document, then call ``then``."""
        shown = self.shown
        if shown.doc is None or scope not in shown.doc.index.graphs:
            return
        if scope == shown.scope and shown.layout is not None:
            if then is not None:
                then()
            return
        trail = shown.trail[: shown.trail.index(scope) + 1] if scope in shown.trail else scope_trail(scope)
        self.load_scope(scope, trail, expanded=None, keep_view=False, then=then)

    def enter_scope(self, scope: str) -> None:
        """Like :meth:`show_scope`, remembering where we came from for the breadcrumb."""
        shown = self.shown
        if shown.doc is None or scope not in shown.doc.index.graphs:
            return
        if scope in shown.trail:  # a function entered from itself: back to where it was, the trail does not grow
            trail = shown.trail[: shown.trail.index(scope) + 1]
        else:
            trail = shown.trail + [scope] if scope.startswith("fn:") else scope_trail(scope)
        if scope.startswith("fn:"):
            self._call = self._selected_call(scope)
        self.load_scope(scope, trail, expanded=None, keep_view=False)

    def _selected_call(self, scope: str) -> dict[str, str]:
        """The attributes (as texts) of the selected node when it calls the function ``scope``: the body then shows
        the caller's value beside each reference to one (``alpha (ref) = 0.5``)."""
        assert self.shown.doc is not None
        index, state = self.shown.doc.index, self.shown.doc.selection.state
        g = index.graphs.get(state.scope)
        if g is None or not 0 <= state.node < len(g.nodes):
            return {}
        node = g.nodes[state.node]
        fn = index.function_for(node)
        if fn is None or function_scope(fn.domain, fn.name, getattr(fn, "overload", "")) != scope:
            return {}
        return {a.name: attribute_text(a) for a in node.attribute}

    def leave_scope(self) -> None:
        """Back to the enclosing graph of the breadcrumb."""
        if len(self.shown.trail) > 1:
            self.show_scope(self.shown.trail[-2])

    def go_up(self) -> None:
        """Back to where the breadcrumb says we came from (the enclosing graph)."""
        if len(self.shown.trail) > 1:
            self.leave_scope()
        elif self.shown.scope:
            self.show_scope(parent_scope(self.shown.scope))

    def subgraphs_of(self, node: int) -> list[tuple[str, str]]:
        """(label, scope) of each graph a node of the shown scope leads into: bodies and local functions."""
        if self.shown.doc is None:
            return []
        index = self.shown.doc.index
        g = index.graphs.get(self.shown.scope)
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

    # -- revealing -------------------------------------------------------------------------------------------
    def _reveal_then(self, scope: str, node: int, select: Callable[[], None]) -> None:
        """Show ``scope``, open the groups hiding node ``node`` (none for -1), then call ``select``."""
        def reveal() -> None:
            d = self.shown.drawable
            if d is not None and (node < 0 or node in d.node_box):
                select()
            else:
                self.jobs.submit(edit_job("Expanding", lambda lay, p, t: lay.reveal(node), select))

        self.show_scope(scope, then=reveal)

    def reveal_node(self, scope: str, node: int) -> None:
        """Show ``scope``, expand the groups hiding ``node``, then select it and bring it into view."""
        doc = self.shown.doc
        if doc is None or scope not in doc.index.graphs:
            return

        def select() -> None:
            doc.selection.select_node(scope, node)
            self.selection.follow(center=True)

        self._reveal_then(scope, node, select)

    def reveal_ghost(self, scope: str, key: int, near: int = -1, missing: Callable[[], None] | None = None) -> None:
        """Show ``scope`` with the groups hiding node ``near`` (a neighbour of the ghost) open, then
        select ghost ``key``; ``missing`` is called when no box draws it even so (counted, not drawn)."""
        d = self.shown.drawable
        if d is not None and key in d.ghost_box and (scope != self.shown.scope or near < 0 or near in d.node_box):
            self.selection.select_ghost(key)   # drawn here already, between its neighbours (or in a body inside)
            return

        def select() -> None:
            if not self.selection.select_ghost(key) and missing is not None:
                missing()

        self._reveal_then(scope, near, select)

    def jump_to(self, hit: SearchHit) -> None:
        """Show and select a search result (a node, or a value via its producer)."""
        doc = self.shown.doc
        if doc is None:
            return
        if hit.node >= 0:
            self.reveal_node(hit.scope, hit.node)
            return
        g = doc.index.graphs.get(hit.scope)
        producer = g.producer.get(hit.value, -1) if g is not None else -1
        if producer >= 0:
            self.reveal_node(hit.scope, producer)
            return
        readers = g.consumers_of(hit.value) if g is not None else []

        def select() -> None:
            doc.selection.select_value(hit.scope, hit.value)
            self.selection.follow(center=True)

        self._reveal_then(hit.scope, readers[0] if readers else -1, select)

    # -- bodies drawn inside their nodes -------------------------------------------------------------------------
    def show_body_inline(self, node: int, on: bool = True, scope: str | None = None) -> None:
        """Draw the bodies of node ``node`` (an If, Loop or Scan of the shown scope, or of ``scope``: a body
        drawn inside a node here) inside its box, or stop."""
        shown = self.shown
        scope = shown.scope if scope is None else scope
        if shown.doc is None or shown.layout is None or not shown.bodies_of(node, scope):
            return
        holder = (scope, node)
        inline = shown.inline | {holder} if on else shown.inline - {holder}
        self.load_scope(shown.scope, shown.trail, shown.layout.expanded, keep_view=True, inline=frozenset(inline))

    def box_holder(self, box: int) -> Holder | None:
        """(scope, node) of the If/Loop/Scan node a box of the shown drawing stands for (its own or in a
        body drawn inside a node), or None."""
        d = self.shown.drawable
        if d is None or not 0 <= box < d.scene.n_boxes:
            return None
        inside = self.shown.embedded_box(box)
        scope, ref = (inside[0].scope, inside[0].scene.box_ref[inside[1]]) if inside is not None else \
            (self.shown.scope, d.scene.box_ref[box])
        if ref.kind != BoxKind.OP or ref.node < 0 or not self.shown.bodies_of(ref.node, scope):
            return None
        return scope, ref.node

    def frame_holder(self, frame: int) -> Holder | None:
        """(scope, node) of the node whose bodies frame ``frame`` holds (around them all, or around one
        body; the node of the shown scope or of a body drawn here), else None."""
        layout = self.shown.layout
        holder = layout.frame_holders.get(frame) if layout is not None else None
        for emb in self.shown.bodies_drawn:
            if emb.frame == frame:
                holder = (emb.parent, emb.node)
        return holder

    def body_toggles(self, drawable: Drawable) -> dict[int, bool]:
        """Boxes of the shown scope's If/Loop/Scan nodes: whether their bodies are drawn inside them."""
        shown = self.shown
        g = shown.doc.index.graphs.get(shown.scope) if shown.doc is not None else None
        if shown.doc is None or g is None or not g.children:
            return {}
        holders = {i for i, _, _ in g.children}
        toggles = {box: (shown.scope, node) in shown.inline for node, box in drawable.node_box.items()
                   if node in holders}
        for emb in shown.bodies_drawn:   # If/Loop/Scan nodes inside the bodies drawn here
            inner = shown.doc.index.graphs.get(emb.scope)
            for node in {i for i, _, _ in inner.children} if inner is not None else ():
                local = emb.scene.box_of_node(node)
                if local >= 0 and emb.scene.box_ref[local].node == node:
                    toggles[emb.box_start + local] = (emb.scope, node) in shown.inline
        return toggles

    # -- clicks ------------------------------------------------------------------------------------------------
    def toggle_box(self, box: int) -> None:
        """The +/- of a box: a collapsed group opens; a node with bodies shows or hides them inside it."""
        d = self.shown.drawable
        if d is None:
            return
        holder = self.box_holder(box)
        if holder is not None:
            self.show_body_inline(holder[1], holder not in self.shown.inline, holder[0])
        elif self.shown.embedded_box(box) is None and d.scene.box_ref[box].kind == BoxKind.GROUP:
            self.expand_group(d.scene.box_ref[box].group)

    def collapse_frame(self, frame: int) -> None:
        """The '-' of a frame: a group closes; a node's bodies (its frame or one body's) go back inside it."""
        d = self.shown.drawable
        if d is None:
            return
        holder = self.frame_holder(frame)
        if holder is not None:
            self.show_body_inline(holder[1], False, holder[0])
        elif not d.scene.group_path[frame].startswith(EMBEDDED):   # a body's own group: kept open
            self.collapse_group(d.scene.group_path[frame])

    def box_double_clicked(self, box: int) -> None:
        """Open what box ``box`` stands for: a group, a body or function it leads into, a ghost's details."""
        d = self.shown.drawable
        if self.shown.doc is None or d is None:
            return
        inside = self.shown.embedded_box(box)
        if inside is not None:   # open the body, this node selected in it
            emb, local = inside
            node = emb.scene.box_ref[local].node
            if node >= 0:
                self.reveal_node(emb.scope, node)
            else:
                self.enter_scope(emb.scope)
            return
        ref = d.scene.box_ref[box]
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

    def _choose_subgraph(self, targets: list[tuple[str, str]]) -> None:
        menu = QMenu(self._menu_parent)
        for label, scope in targets:
            menu.addAction(f"Enter {label}", self.scope_opener(scope))
        menu.popup(QCursor.pos())

    def activate_selected(self) -> None:
        """Enter: open the selected box like a double-click does."""
        box = self.selection.selected_box()
        if box >= 0:
            self.box_double_clicked(box)
