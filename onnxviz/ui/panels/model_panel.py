"""The Model panel: what the file says about the whole model, plus a computed summary."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from onnx import StringStringEntryProto
from PySide6.QtCore import QModelIndex, QSize, Qt, QTimer
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from onnxviz.model.background.contained import crash_named
from onnxviz.model.background.early import early_figures
from onnxviz.model.background.jobs import figures_job, run_on_model, unpack_figures
from onnxviz.model.background.procpool import shared_worker
from onnxviz.model.document import Document
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.flops import CostSummary, NodeCost, human_count
from onnxviz.model.graph.index import function_scope, scope_label
from onnxviz.model.graph.summary import ModelFigures, human_bytes, opsets, parameters
from onnxviz.model.problems import DATA
from onnxviz.model.process_tuning import building
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.ui.panels.common import (
    Form,
    Page,
    anchor,
    code,
    key_html,
    metadata_rows,
    prose_html,
    rich_label,
    scope_href,
    text_html,
    type_html,
    value_href,
    value_type,
)
from onnxviz.ui.panels.cost_table import CostRowsModel, CostTable
from onnxviz.ui.panels.tables import ColumnsFit, RowsModel, fit_height, make_table, show_all_rows, source_row
from onnxviz.ui.tasks import Task, waiting_pool
from onnxviz.ui.validation import document_bytes_in_thread, document_key, document_source
from onnxviz.ui.widgets.markdown import MarkdownBlock, markdown_view
from onnxviz.ui.widgets.names import RichLabel

COST_HEADERS = ["Node", "Op", "MACs", "FLOPs", "Shape"]  # the shape of the node's output
COST_ORDER = (2, Qt.SortOrder.DescendingOrder)  # the most expensive nodes first
MAX_METADATA = 200  # metadata entries listed (a file may carry 100,000)
METADATA_LINES = 12  # of a value (a dynamo export's graph signature has hundreds)
FOLDED_LINES, FOLDED_CHARS = 3, 240  # a longer metadata value opens folded to this, "show all" unfolds it
UNFOLDED_LINES, UNFOLDED_CHARS = 2000, 60_000   # what "show all" shows at most
UNFOLD, FOLD = "metadata:unfold", "metadata:fold"
SHOWN_GRAPHS = 12  # graphs listed with their own figures (parameters, MACs of one run)


@dataclass(frozen=True)
class PreparedFigures:
    """The figures and what the page shows of them, made off the GUI thread (100k+ rows)."""

    figures: ModelFigures
    total: CostSummary
    cost_table: CostTable  # in COST_ORDER


def prepare_figures(figures: ModelFigures) -> PreparedFigures:
    costs = figures.costs
    return PreparedFigures(figures, costs.summary(), CostTable.of(costs).sorted(*COST_ORDER))


def _inference_html(doc: Document) -> str:
    failed = next((p for p in doc.validation_problems if p.source == "shape_inference"), None)
    if failed is not None:
        return f'<span style="color:#b5730a">{html.escape(failed.message)}</span> (declared types are shown)'
    if not doc.index.inferred:
        return '<span style="color:gray">not run yet</span>'
    return f"{sum(len(v) for v in doc.index.inferred.values()):,} value types inferred"


def _signature_html(doc: Document, name: str, link: str) -> str:
    """A main-graph input's or output's row: its ``link``, then its type (declared, else inferred)."""
    return link + "&nbsp;&nbsp;" + type_html(*value_type(doc.index, "", name))


class ModelPanel(Page):
    """Shown when nothing is selected; rebuilt on open and edits, updated in place by validation results."""

    def __init__(self, on_link: Callable[[str], None], select_node: Callable[[str, int], None]) -> None:
        super().__init__(on_link)
        self.select_node = select_node
        self.doc: Document | None = None
        self.costs: Sequence[NodeCost] = []
        self._task: Task | None = None
        self._task_state: tuple[Document, int] | None = None  # the document and generation it computes
        self._shown_page = 0  # show_document calls so far; figures arrive for the latest one
        self._figures_page = -1  # the page whose figures (or their failure) are shown
        # the last figures and the model state they describe: a page rebuilt for the same state (a Save As
        # renames the file) shows them again; the worker computed them with that state's own types
        self._last_figures: tuple[Document, int, PreparedFigures] | None = None
        self.cost_model = CostRowsModel(COST_HEADERS, self)
        self.cost_form: Form | None = None
        self.facts_form: Form | None = None
        self.signature: list[tuple[RichLabel, str, str]] = []  # (label, value name, its link) per row
        self._page_state: tuple[Document, int, str] | None = None  # what the page was built from
        self.show_document(None)

    def sizeHint(self) -> QSize:
        return QSize(430, 620)

    @property
    def settled(self) -> bool:
        """Nothing left to compute: no model, or its figures (or why they failed) are shown."""
        return self.doc is None or self._figures_page == self._shown_page

    @property
    def computing(self) -> bool:
        """The figures' background task is running."""
        return self._task is not None

    def show_document(self, doc: Document | None) -> None:
        if self._last_figures is not None and self._last_figures[0] is not doc:
            self._last_figures = None  # nor keep a closed document alive
        self.doc = doc
        self._shown_page += 1
        self._page_state = (doc, doc.generation, str(doc.path)) if doc is not None else None
        self.costs = []
        self.signature = []
        self.begin(id(doc))
        if doc is None:
            self.add_title("No model", "Open an ONNX model with File > Open.")
            self.end()
            return
        model = doc.model
        index = doc.index
        self.add_title(doc.name, html.escape(f"ONNX IR v{model.ir_version} · {index.node_count():,} nodes"))
        self.scope_label = rich_label("", self.on_link)
        self.scope_doc = MarkdownBlock("")  # the subgraph's or function's doc_string
        scope_body = QWidget()
        scope_layout = QVBoxLayout(scope_body)
        scope_layout.setContentsMargins(14, 0, 0, 0)
        scope_layout.addWidget(self.scope_label)
        scope_layout.addWidget(self.scope_doc)
        self.scope_section = self.add_section("Current graph", scope_body)
        self.show_scope(doc.selection.state.scope)
        self._add_facts(doc)
        if model.doc_string:
            self.add_section("Description", markdown_view(model.doc_string))
        if model.graph.doc_string:
            self.add_section("Main graph description", markdown_view(model.graph.doc_string))
        self.metadata_forms: dict[str, Form] = {}
        for title, props in (("Metadata", model.metadata_props), ("Graph metadata", model.graph.metadata_props)):
            if props:
                self._add_metadata(title, props)
        self._add_signature(doc)
        if model.functions:
            rows = [(key_html(f.domain or "ai.onnx"), anchor(scope_href(function_scope(f.domain, f.name,
                                                                               getattr(f, "overload", ""))),
                                                   f.name) + f" ({len(f.node)} nodes)") for f in model.functions]
            self.add_form(f"Local functions ({len(rows)})", rows)
        self._add_summary(doc)
        self._add_costs()
        self.end()
        self._start_figures(doc)

    def show_validation(self, doc: Document) -> None:
        """A validation result arrived for ``doc``: only what it changes (the inference row, the inputs' and
        outputs' types) is shown anew when the page shows that state; otherwise the page is rebuilt. Rebuilding
        the whole page of a 123k-node model held the GUI thread ~40 ms each time."""
        if self._page_state != (doc, doc.generation, str(doc.path)) or self.facts_form is None:
            self.show_document(doc)
            return
        self.facts_form.values["Shape inference"].setText(_inference_html(doc))
        for label, name, link in self.signature:
            label.setText(_signature_html(doc, name, link))

    def show_scope(self, scope: str) -> None:
        """Describe the subgraph or function being browsed (hidden for the main graph)."""
        doc = self.doc
        g = doc.index.graphs.get(scope) if doc is not None and scope else None
        if doc is None or g is None:
            if doc is not None:
                self.scope_section.setVisible(False)
            return
        lines = [f"{code(scope)} · {len(g.nodes):,} nodes"]
        for title, names in (("inputs", g.input_names), ("outputs", g.output_names)):
            links = ", ".join(anchor(value_href(scope, n), n) for n in names[:20])
            more = f" and {len(names) - 20} more" if len(names) > 20 else ""
            lines.append(f"{title}: {links or '-'}{more}")
        described = g.function if g.function is not None else g.graph
        props = list(getattr(described, "metadata_props", []))[:MAX_METADATA]  # a function's, a body's
        lines += [f"{key}: {value}" for key, value in metadata_rows(props, METADATA_LINES)]
        lines.append(anchor(scope_href(""), "back to the main graph", mono=False))
        self.scope_label.setText("<br>".join(lines))
        self.scope_doc.set_markdown(described.doc_string if described is not None else "")
        self.scope_section.setVisible(True)

    def _add_facts(self, doc: Document) -> None:
        model = doc.model
        producer = " ".join(x for x in (model.producer_name, model.producer_version) if x)
        rows = [
            ("IR version", str(model.ir_version)),
            ("Opsets", ", ".join(f"{text_html(d)} <b>{v}</b>" for d, v in opsets(model).items())),
            ("Producer", text_html(producer)),
            ("Domain", text_html(model.domain)),
            ("Model version", str(model.model_version)),
            ("Graph", code(model.graph.name)),
            ("Training info", f"{len(model.training_info)} block(s)" if model.training_info else "none"),
            ("File", text_html(str(doc.path), None) if doc.path else "not saved"),
            ("Shape inference", _inference_html(doc)),
        ]
        self.facts_form = self.add_form("Model", rows)

    def _add_metadata(self, title: str, props: Sequence[StringStringEntryProto]) -> None:
        """Metadata entries as rows: a value written in lines (torch's stack traces, a dynamo export's
        graph signature) keeps them; invisible characters are shown escaped; a long value opens folded to
        its first lines, with "show all" (and back) beside it."""
        form = self.add_form(f"{title} ({len(props):,})", [])
        for prop in props[:MAX_METADATA]:
            label = form.add(key_html(prop.key), folded_html(prop.value))
            if is_long(prop.value):
                label.linkActivated.connect(lambda href, shown=label, value=prop.value: unfold(shown, value, href))
        if len(props) > MAX_METADATA:
            form.add("", f'<span style="color:gray">... and {len(props) - MAX_METADATA:,} more</span>')
        self.metadata_forms[title] = form

    def _add_signature(self, doc: Document) -> None:
        index = doc.index
        inits = set(index.main.initializer_names)
        for title, names in (("Inputs", [n for n in index.main.input_names if n not in inits]),
                             ("Outputs", index.main.output_names)):
            form = Form(self.on_link)
            for name in names[:200]:
                link = anchor(value_href("", name), name)
                label = form.add("", _signature_html(doc, name, link))
                label.setTextFormat(Qt.TextFormat.RichText)
                self.signature.append((label, name, link))
            if len(names) > 200:
                form.add("", f"... and {len(names) - 200} more")
            self.add_section(f"{title} ({len(names)})", form)

    def _add_summary(self, doc: Document) -> None:
        model = doc.model
        pending = '<span style="color:gray">computing...</span>'
        rows = [("Nodes", f"{len(model.graph.node):,} in the main graph, {doc.index.node_count():,} in all"),
                ("Parameters", pending), ("By dtype", ""), ("MACs", ""), ("FLOPs", "")]
        self.cost_form = self.add_form("Summary", rows)
        self.op_model = RowsModel(["Op type", "Count"], self.content)
        self.op_model.numeric_columns = {1}
        view = make_table(self.op_model, stretch_column=0)
        view.sortByColumn(1, Qt.SortOrder.DescendingOrder)
        show_all_rows(view)
        self.op_view = view
        self.op_section = self.add_section("Operators", view)

    def _add_costs(self) -> None:
        self.cost_model = CostRowsModel(COST_HEADERS, self.content)  # dies with the page
        self.cost_model.numeric_columns = {2, 3}
        self.cost_model.formatters = {2: human_count, 3: human_count}  # exact figure in the tooltip
        view = make_table(self.cost_model)
        view.setTextElideMode(Qt.TextElideMode.ElideMiddle)   # a long name keeps its end (the layer, the op)
        self.cost_columns = ColumnsFit(view, (4, 2, 0, 0, 2), {})
        view.sortByColumn(*COST_ORDER)
        view.clicked.connect(self._on_cost_clicked)
        view.activated.connect(self._on_cost_clicked)
        fit_height(view, 14)
        self.cost_view = view
        holder = QWidget()
        layout = QVBoxLayout(holder)
        layout.setContentsMargins(0, 0, 0, 0)
        note = QLabel("Main graph; symbolic dimensions count as 1. Click a row to select the node.")
        note.setProperty("role", "note")
        note.setWordWrap(True)
        layout.addWidget(note)
        layout.addWidget(view)
        self.add_section("Per-node cost", holder, expanded=True)

    # -- background figures ----------------------------------------------------------------------
    def _start_figures(self, doc: Document) -> None:
        if self._task is not None:
            if self._task_state is not None and self._task_state[0] is doc and self._task_state[1] == doc.generation:
                return  # the page was rebuilt for the same state (e.g. saved as): the figures will fill it
            self._task.cancel()
            self._task, self._task_state = None, None
        # after this page's first frame: taking the bytes of an edited model is a serialization
        QTimer.singleShot(0, self, lambda d=doc: self._compute_figures(d))

    def _compute_figures(self, doc: Document) -> None:
        """In the worker process, from the model's bytes: no copy here, no GIL taken from the GUI."""
        if doc is not self.doc or self._task is not None:
            return
        last = self._last_figures
        if last is not None and last[0] is doc and last[1] == doc.generation:
            self._figures_page = self._shown_page
            self._show_figures(last[2])
            return
        key, source, worker, state = document_key(doc), document_source(doc), shared_worker(), doc.generation

        def work(progress: ProgressFn, token: CancelToken) -> PreparedFigures:
            data = document_bytes_in_thread(doc, state, token)  # over 2 GiB: fails with a sentence
            digest = doc.analysis_digest(data)  # hashed once: validation asks for it too
            packed = early_figures(doc.early, digest, token) if source is not None else None
            if packed is None:  # the figures need shape inference's types: a crash of it is named
                packed = crash_named(lambda: run_on_model(worker, figures_job, data, digest, source, key, token=token),
                                     data, token=token)
            with building():  # 100k+ rows that live as long as the page: no collection walks the window's heap
                return prepare_figures(unpack_figures(packed))

        task = Task(work, "Summarising the model", parent=self)  # dies with the panel: no late delivery
        task.finished.connect(lambda figures, d=doc, t=task, g=doc.generation: self._on_figures(d, t, g, figures))
        task.failed.connect(lambda exc, _tb, d=doc, t=task: self._figures_failed(d, exc) if t is self._task else None)
        self._task, self._task_state = task, (doc, doc.generation)
        task.start(waiting_pool())

    def _figures_failed(self, doc: Document, exc: object) -> None:
        if doc is not self.doc or self.cost_form is None:
            return
        self._task, self._task_state = None, None
        self._figures_page = self._shown_page
        text = exc.message if isinstance(exc, OnnxvizError) else str(exc)
        self.cost_form.values["Parameters"].setText(f'<span style="color:#b5730a">not computed: '
                                                    f'{html.escape(text)}</span>')

    def _on_figures(self, doc: Document, task: Task, generation: int, prepared: PreparedFigures) -> None:
        if doc is not self.doc or task is not self._task:
            return
        self._task, self._task_state = None, None
        self._figures_page = self._shown_page
        self._last_figures = (doc, generation, prepared)
        self._show_figures(prepared)

    def _show_figures(self, prepared: PreparedFigures) -> None:
        form = self.cost_form
        assert form is not None
        figures, total = prepared.figures, prepared.total
        scopes, count, nbytes, by_dtype = figures.by_scope, figures.parameters, figures.parameter_bytes, \
            figures.bytes_by_dtype
        doc = self.doc
        without = {p.value for p in doc.problems if p.source == DATA and p.value} if doc is not None else set()
        if without and doc is not None:  # no size for bytes not there: counted again without them (rare, ~40 ms)
            scopes, by_dtype = parameters(doc.index, without)
            count, nbytes = sum(s.count for s in scopes), sum(s.nbytes for s in scopes)
        where = [(s.scope, f"{s.count:,}") for s in scopes]
        missing = sum(s.missing for s in scopes)
        left_out = (f' <span style="color:#b5730a">not counting {missing:,} tensor{"s" if missing != 1 else ""} '
                    "whose data is missing or refused (see Problems)</span>") if missing else ""
        form.values["Parameters"].setText(f"{count:,} ({human_bytes(nbytes)}){left_out}"
                                          + (self._by_graph(where) if len(where) > 1 else ""))
        form.values["By dtype"].setText(", ".join(f"{html.escape(k)} {human_bytes(v)}"
                                                  for k, v in sorted(by_dtype.items())))
        unknown = f" ({total.unknown_nodes:,} nodes without known shapes not counted)" if total.unknown_nodes else ""
        bodies = [(scope, human_count(macs)) for scope, macs, _ in figures.bodies if macs]
        form.values["MACs"].setText(f"{human_count(total.macs)} in the main graph{unknown}"
                                    + (self._by_graph(bodies, "one run of each body: ") if bodies else ""))
        form.values["FLOPs"].setText(human_count(total.flops))
        self.op_model.set_rows(figures.op_counts.most_common())
        self.op_section.header.setText(f"Operators ({len(figures.op_counts)} types)")
        show_all_rows(self.op_view)
        self._show_costs(prepared)

    def _show_costs(self, prepared: PreparedFigures) -> None:
        self.cost_model.set_table(prepared.cost_table, sorted_by=COST_ORDER)
        outcomes = prepared.cost_table.costs.outcomes
        macs, flops = [human_count(o[0]) for o in outcomes], [human_count(o[1]) for o in outcomes]
        self.cost_columns.set_samples({2: max(macs, key=len, default=""), 3: max(flops, key=len, default="")})
        fit_height(self.cost_view, 14)
        self.costs = prepared.figures.costs

    def _by_graph(self, figures: list[tuple[str, str]], lead: str = "") -> str:
        """``main graph 0 · If vad (then_branch) 103,596 · ...``: a figure per graph, each graph a link."""
        doc = self.doc
        index = doc.index if doc is not None else None
        shown = [f"{anchor(scope_href(scope), scope_label(index, scope), mono=False)} {html.escape(figure)}"
                 for scope, figure in figures[:SHOWN_GRAPHS]]
        more = f" and {len(figures) - SHOWN_GRAPHS:,} more" if len(figures) > SHOWN_GRAPHS else ""
        return f'<br><span style="color:gray">{lead}</span>' + " · ".join(shown) + more

    def _on_cost_clicked(self, index: QModelIndex) -> None:
        row = source_row(self.cost_view, index)
        if 0 <= row < len(self.cost_model.payload):
            self.select_node("", int(self.cost_model.payload[row]))


def is_long(value: str) -> bool:
    """A metadata value that opens folded: more lines or characters than a glance takes in."""
    return value.count("\n", 0, FOLDED_CHARS * 4) >= FOLDED_LINES + 1 or len(value) > FOLDED_CHARS + 60


def folded_html(value: str) -> str:
    """A metadata value as it opens: whole when short, else its first lines and a "show all" link."""
    if not is_long(value):
        return prose_html(value, max_lines=METADATA_LINES)
    lines = value.count("\n") + 1
    what = f"all {lines:,} lines" if lines > 1 else f"all {len(value):,} characters"
    return (prose_html(value, FOLDED_CHARS, FOLDED_LINES)
            + f'<br><a href="{UNFOLD}" style="text-decoration:none">show {what}</a>')


def unfold(label: QLabel, value: str, href: str) -> None:
    """Show all of a folded metadata value (``UNFOLD``), or fold it again (``FOLD``)."""
    if href == UNFOLD:
        label.setText(prose_html(value, UNFOLDED_CHARS, UNFOLDED_LINES)
                      + f'<br><a href="{FOLD}" style="text-decoration:none">show less</a>')
    elif href == FOLD:
        label.setText(folded_html(value))
