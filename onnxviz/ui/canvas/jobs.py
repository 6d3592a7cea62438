"""The canvas's layout jobs: one runs at a time off the GUI thread (:class:`~onnxviz.ui.tasks.Task`), with
progress and cancel; a new layout replaces whatever runs, edits of the current layout (expand a group, edge
labels, ghosts) wait their turn; a newly opened document's layout starts once the window has painted.
Box texts changed by an edit alone are redrawn in place, after the running job if it works on the layout."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from onnxviz.model.layout.drawable import Drawable
from onnxviz.model.layout.ghosts import Ghost, merge_ghosts
from onnxviz.model.layout.inline import InlineLayout
from onnxviz.model.layout.scene import Scene
from onnxviz.model.process_tuning import building
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.ui.canvas.progress_overlay import LayoutProgress
from onnxviz.ui.canvas.shown import ShownGraph
from onnxviz.ui.canvas.view import GraphView
from onnxviz.ui.statusbar import TaskProgress
from onnxviz.ui.tasks import Task, foreground_pool

LayoutWork = Callable[[Any, ProgressFn, CancelToken], Scene]   # (layout, progress, token) -> scene
FRAME_WAIT_MS = 250   # a new document's layout starts after the window's next frame, or after this
LAYOUT_SHARE = 0.87   # of a job's progress bar: the layout; the rest is the drawing's arrays (123k nodes: ~1 s of ~7)


@dataclass
class Job:
    """One piece of layout work: a new layout (``make_layout``) or work on the current one."""

    label: str
    make_layout: Callable[[], Any] | None   # None: reuse the current layout object
    work: LayoutWork
    then: Callable[[], None] | None
    keep_view: bool
    announce: bool = True   # emit scene_ready once shown (not for label refreshes)
    after_frame: bool = False   # start once the window has painted (a newly opened document)
    scope: tuple[str, list[str]] | None = None  # (scope, trail) the laid-out graph belongs to

    @property
    def new_layout(self) -> bool:
        """Whether the job makes a layout of its own (else it works on the one shown)."""
        return self.make_layout is not None


def edit_job(label: str, work: LayoutWork, then: Callable[[], None] | None = None,
             announce: bool = True) -> Job:
    """A job on the current layout that keeps the view (expand, collapse, reveal, labels, ghosts)."""
    return Job(label, None, work, then, True, announce=announce)


class LayoutJobs(QObject):
    """The queue of layout jobs of one canvas.

    ``deliver(job, layout, drawable)`` shows a finished job's result, ``fail(job, message)`` a failure
    (then :attr:`failed` is emitted);
    ``rebuild()`` lays the shown graph out again when a text edit needs it after all."""

    scene_ready = Signal()   # a newly built scene has been painted
    failed = Signal(str)     # a job failed (its message), once the next job is started

    def __init__(self, shown: ShownGraph, view: GraphView, progress_bar: LayoutProgress,
                 ghosts: Callable[[], Mapping[str, Sequence[Ghost]]],
                 deliver: Callable[[Job, InlineLayout, Drawable], None], fail: Callable[[Job, str], None],
                 rebuild: Callable[[], None], place_overlays: Callable[[], None], parent: QObject) -> None:
        super().__init__(parent)
        self.shown, self.view, self.progress_bar = shown, view, progress_bar
        self._ghosts, self._deliver, self._fail, self._rebuild = ghosts, deliver, fail, rebuild
        self._place_overlays = place_overlays
        self.status_progress: TaskProgress | None = None  # the window's, once the canvas is installed in one
        self._task: Task | None = None
        self._pending: list[Job] = []
        self._running: Job | None = None   # the job of ``_task``
        self._retext_waiting: set[int] = set()   # nodes whose box texts change once the running job ends
        self._ready_pending = False
        self._unstarted: Task | None = None   # a layout waiting for the window's next frame
        view.painted.connect(self.frame_painted)

    # -- what tests and the canvas look at ---------------------------------------------------------
    @property
    def task(self) -> Task | None:
        """The task of the job running (or waiting for the window's next frame), None when idle."""
        return self._task

    @property
    def running(self) -> Job | None:
        """The job of :attr:`task`."""
        return self._running if self._task is not None else None

    @property
    def pending(self) -> tuple[Job, ...]:
        """The jobs queued behind the running one, in order."""
        return tuple(self._pending)

    @property
    def unstarted(self) -> Task | None:
        """A new document's layout task waiting for the window's next frame (or FRAME_WAIT_MS) to start: it reads
        the index (the inferred types too) as it starts."""
        return self._unstarted if self._unstarted is self._task else None

    @property
    def busy(self) -> bool:
        """A job runs or is queued."""
        return self._task is not None or bool(self._pending)

    # -- the queue ---------------------------------------------------------------------------------
    def submit(self, job: Job) -> None:
        """Run ``job``: at once when it makes a new layout (cancelling the rest), else after the running one;
        a job on the current layout is dropped when there is no layout."""
        if job.make_layout is not None:          # a fresh layout replaces whatever is running
            self.cancel()
        elif self._task is not None:             # edits of the current layout wait their turn
            self._pending.append(job)
            return
        elif self.shown.layout is None:
            return
        self._start(job)

    def cancel(self) -> None:
        """Stop the running job and drop the queued ones."""
        self._pending = []
        self._retext_waiting = set()   # like the queued edge labels (a new layout reads the new names)
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self.progress_bar.hide()

    def _start(self, job: Job) -> None:
        current = self.shown.layout

        def work(progress: ProgressFn, token: CancelToken) -> tuple[Any, Drawable]:
            # the layout makes many acyclic objects (123k nodes: collections took ~15% of its CPU): none runs
            # meanwhile, and what it made is kept until the next layout, so later collections need not walk it
            with building():
                layout = job.make_layout() if job.make_layout is not None else current
                assert layout is not None   # jobs without a layout of their own start only once there is one
                scene = job.work(layout, lambda fraction, text: progress(LAYOUT_SHARE * fraction, text), token)
                progress(LAYOUT_SHARE, "Preparing the drawing")
                ghosts = self._ghosts()   # as they are now: set_ghosts queues another job after this one
                if ghosts:
                    scene = merge_ghosts(scene, ghosts, layout.embedded, layout.options.names)
                token.check()
                drawable = Drawable(scene)
            # cancelled meanwhile (the status bar cancels the task alone): end as cancelled, so that this queue
            # hears of it; a result the task drops would leave the job "running" and every later edit waiting
            token.check()
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

    def _job_done(self, task: Task, job: Job, result: tuple[InlineLayout, Drawable]) -> None:
        if self._task is not task:
            return
        self._deliver(job, *result)
        if job.then is not None:
            job.then()
        self._job_ended(task)

    def _job_failed(self, task: Task, job: Job, exc: object) -> None:
        if self._task is not task:
            return
        message = getattr(exc, "message", None) or f"The graph could not be laid out: {exc}."
        self._fail(job, message)
        self._job_ended(task)
        self.failed.emit(message)

    def _job_ended(self, task: Task) -> None:
        if self._task is not task:
            return
        self._task = None
        self.progress_bar.hide()
        while self._pending:
            job = self._pending.pop(0)
            if job.make_layout is not None or self.shown.layout is not None:  # a failed layout left none to edit
                self._start(job)
                break
        if self._task is None and self._retext_waiting:
            nodes, self._retext_waiting = frozenset(self._retext_waiting), set()
            if not self._apply_retext(nodes):
                self._rebuild()

    # -- the first frame of a scene ------------------------------------------------------------------
    def announce_when_painted(self) -> None:
        """Emit :attr:`scene_ready` once the view has painted the scene just shown (at once when hidden)."""
        self._ready_pending = True
        if not self.view.isVisible():
            QTimer.singleShot(0, self, self.frame_painted)

    def frame_painted(self) -> None:
        """The view painted a frame: start the layout that waited for it, announce the scene drawn."""
        if self._unstarted is not None:
            QTimer.singleShot(0, self, self._start_unstarted)  # once this frame is complete
        if self._ready_pending:
            self._ready_pending = False
            QTimer.singleShot(0, self, self.scene_ready.emit)

    # -- box texts without a layout -------------------------------------------------------------------
    def retext(self, nodes: frozenset[int]) -> bool:
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
        shown = self.shown
        layout, drawable = shown.layout, shown.drawable
        if shown.doc is None or layout is None or drawable is None or shown.scope != "" \
                or shown.doc.index is not layout.index:
            return False
        scene = layout.refresh_nodes(nodes)
        if scene is None or scene.box_ref is not drawable.scene.box_ref:  # not the scene drawn: draw anew
            return False
        if scene is not drawable.scene:
            drawable.retext(scene)
            self.view.update()
        return True
