"""Building blocks shared by the inspector panels: links, collapsible sections, aligned forms."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

from onnx import SparseTensorProto, StringStringEntryProto, TensorProto, TypeProto, helper
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.graph.index import INITIALIZER, GraphIndex, ModelIndex
from onnxviz.model.text import display_lines, dtype_text, shape_list, shape_text
from onnxviz.ui.widgets.names import ElidedLabel, RichLabel, breakable, name_tooltip, wrappable

PANEL_STYLE = """
QToolButton#sectionHeader { border: none; font-weight: 600; padding: 4px 2px 2px 0px; text-align: left; }
QFrame#sectionLine { color: palette(mid); }
QLabel[role="key"] { color: palette(placeholder-text); }
QLabel[role="title"] { font-size: 13pt; font-weight: 600; }
QLabel[role="subtitle"] { color: palette(placeholder-text); }
QLabel[role="note"] { color: palette(placeholder-text); font-style: italic; }
"""

TITLE_CHARS = 300  # of a name shown as a panel's title (elided to one line; its tooltip has more)
NAME_CHARS = 300   # of a name in a row or a link (wrapped within the panel; its tooltip has more)
KEY_CHARS = 60     # of a name used as a row's key (an attribute's, a metadata key)


# -- links: "node:<scope>:<index>", "value:<scope>:<name>", "scope:<scope>", "tensor:<key>" ---------
@dataclass(frozen=True)
class Link:
    kind: str
    scope: str
    target: str


def node_href(scope: str, node: int) -> str:
    return f"node:{quote(scope, safe='')}:{node}"


def value_href(scope: str, name: str) -> str:
    return f"value:{quote(scope, safe='')}:{quote(name, safe='')}"


def scope_href(scope: str) -> str:
    return f"scope:{quote(scope, safe='')}:"


def parse_href(href: str) -> Link | None:
    parts = href.split(":", 2)
    if len(parts) != 3:
        return None
    return Link(parts[0], unquote(parts[1]), unquote(parts[2]))


def text_html(text: str, limit: int | None = NAME_CHARS) -> str:
    """``text`` from the file (a name, a message quoting one) as HTML for a wrapping label: invisible
    characters shown as ``\\x0a``, cut at ``limit`` characters, and free to wrap anywhere so that a
    100,000-character name never makes its panel wider (:func:`~onnxviz.ui.widgets.names.breakable`)."""
    return html.escape(wrappable(text, limit))


PROSE_CHARS = 4000  # of a text shown in lines (a metadata value)
PROSE_LINES = 24


def prose_html(text: str, limit: int = PROSE_CHARS, max_lines: int = PROSE_LINES) -> str:
    """Text from the file written in lines (a metadata value: torch's stack traces, a graph signature) as
    HTML for a wrapping label: its lines and their indentation kept, other invisible characters escaped
    like :func:`text_html` escapes them, cut at ``limit`` characters and ``max_lines`` lines (blank lines
    around it left out)."""
    lines = display_lines(text.strip("\r\n"), limit, max_lines).split("\n")
    body = "\n".join(html.escape(breakable(line)) for line in lines)
    return f'<span style="white-space:pre-wrap">{body}</span>'


def metadata_rows(props: Sequence[StringStringEntryProto], max_lines: int = PROSE_LINES) -> list[tuple[str, str]]:
    """(key, value) HTML of metadata entries for a :class:`Form`: keys like names, values in lines."""
    return [(key_html(p.key), prose_html(p.value, max_lines=max_lines)) for p in props]


def anchor(href: str, text: str, mono: bool = True) -> str:
    """A link showing ``text`` (a name from the file, shown like :func:`text_html` shows it)."""
    body = text_html(text)
    if mono:
        body = f"<code>{body}</code>"
    return f'<a href="{html.escape(href)}" style="text-decoration:none">{body}</a>'


def code(text: str) -> str:
    """``text`` (a name from the file) in a monospace font, shown like :func:`anchor` shows it."""
    return f"<code>{text_html(text)}</code>" if text else ""


def key_html(text: str) -> str:
    """A name from the file as a row's key (an attribute's name, a metadata key): shown like
    :func:`text_html`, cut shorter."""
    return text_html(text, KEY_CHARS)


# text that HTML shows as written and Qt wraps the same as plain text: printable ASCII, no tag, no entity
AS_WRITTEN = re.compile(r"[ -%'-;=-~]*")


def text_format(text: str) -> Qt.TextFormat:
    """How a label shows ``text``, HTML: as plain text where that looks the same (Qt then lays the label out
    without a text document), else as rich text (a name cut with zero-width spaces to wrap, folded spaces...)."""
    plain = AS_WRITTEN.fullmatch(text) is not None and "  " not in text
    return Qt.TextFormat.PlainText if plain else Qt.TextFormat.RichText


def find_initializer(g: GraphIndex, name: str) -> TensorProto | SparseTensorProto | None:
    """The initializer ``name`` visible from ``g`` (its own or an enclosing graph's), dense or sparse."""
    scope: GraphIndex | None = g
    while scope is not None:
        kind = scope.producer.get(name)
        if kind == INITIALIZER and scope.graph is not None:
            if name in scope.initializer_names:
                # a C-speed list search, then direct access: no Python object per initializer
                return scope.graph.initializer[scope.initializer_names.index(name)]
            return next((t for t in scope.graph.sparse_initializer if t.values.name == name), None)
        if kind is not None:
            return None
        scope = scope.parent
    return None


def tensor_type(tensor: TensorProto | SparseTensorProto) -> TypeProto:
    """The type of a dense or sparse initializer, as a value would declare it."""
    if isinstance(tensor, SparseTensorProto):
        return helper.make_sparse_tensor_type_proto(tensor.values.data_type, list(tensor.dims))
    return helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims))


def value_type(index: ModelIndex, scope: str, name: str) -> tuple[TypeProto | None, str]:
    """(type, where it came from: "declared", "inferred", "initializer" or "") of a value."""
    t, inferred = index.type_of(scope, name)
    if t is not None and not inferred and shape_list(t) is None:
        better = index.inferred.get(scope, {}).get(name)  # the file declares less than inference knows
        if better is not None and shape_list(better) is not None:
            return better, "inferred"
    if t is not None:
        return t, "inferred" if inferred else "declared"
    g = index.graphs.get(scope)
    tensor = find_initializer(g, name) if g is not None else None
    if tensor is not None:
        return tensor_type(tensor), "initializer"
    return None, ""


def type_html(t: TypeProto | None, source: str | bool = "") -> str:
    """``float32 [1\u00d73\u00d7224\u00d7224]`` with a grey marker saying where the type came from unless declared."""
    if t is None:
        return '<span style="color:gray">unknown type</span>'
    dtype, shape = dtype_text(t), shape_text(t, names=True)
    text = f"{html.escape(dtype)} <code>[{text_html(shape)}]</code>" if shape else html.escape(dtype)
    marker = "inferred" if source is True else source if isinstance(source, str) else ""
    if marker and marker != "declared":
        text += f' <span style="color:gray">({marker})</span>'
    return text


# -- widgets ---------------------------------------------------------------------------------
def rich_label(text: str, on_link: Callable[[str], None] | None = None, wrap: bool = True) -> RichLabel:
    label = RichLabel(text)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
    label.setOpenExternalLinks(False)
    label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    if on_link is not None:
        label.linkActivated.connect(on_link)
    return label


def _arrow(expanded: bool) -> Qt.ArrowType:
    return Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow


class Section(QWidget):
    """A titled block whose body collapses when its header is clicked."""

    def __init__(self, title: str, body: QWidget, expanded: bool = True) -> None:
        super().__init__()
        self.header = QToolButton()
        self.header.setObjectName("sectionHeader")
        self.header.setText(title)
        self.header.setCheckable(True)
        self.header.setChecked(expanded)
        self.header.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.header.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.body = body
        line = QFrame()
        line.setObjectName("sectionLine")
        line.setFrameShape(QFrame.Shape.HLine)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 2)
        layout.setSpacing(2)
        layout.addWidget(self.header)
        layout.addWidget(line)
        layout.addWidget(body)
        self.header.toggled.connect(self._set_expanded)
        self.header.setArrowType(_arrow(expanded))
        if not expanded or body.testAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide):
            body.setVisible(expanded)  # an open body shows with its section: showing it now would polish its
            # widgets in the application's style, and again in the page's style sheet once the section is added

    @property
    def expanded(self) -> bool:
        return self.header.isChecked()

    def _set_expanded(self, on: bool) -> None:
        self.header.setArrowType(_arrow(on))
        self.body.setVisible(on)


class Form(QWidget):
    """Rows of grey key and selectable value, aligned in two columns."""

    def __init__(self, on_link: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self.on_link = on_link
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(14, 0, 0, 0)
        self.grid.setHorizontalSpacing(10)
        self.grid.setVerticalSpacing(3)
        self.grid.setColumnStretch(1, 1)
        self.values: dict[str, RichLabel] = {}
        self.keys: dict[str, QLabel] = {}

    def add(self, key: str, value_html: str, tooltip: str = "") -> RichLabel:
        """A row; ``key`` is HTML too (a name from the file goes through :func:`key_html`), never guessed
        to be plain text: shown as plain text only where :func:`text_format` finds it looks the same."""
        row = self.grid.rowCount()
        key_label = RichLabel(key)
        key_label.setTextFormat(text_format(key))
        key_label.setWordWrap(True)
        key_label.setProperty("role", "key")
        key_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        value = rich_label(value_html or '<span style="color:gray">-</span>', self.on_link)
        if tooltip:
            value.setToolTip(tooltip)
        self.grid.addWidget(key_label, row, 0)
        self.grid.addWidget(value, row, 1)
        self.values[key] = value
        self.keys[key] = key_label
        return value

    def add_name(self, key: str, name: str, empty_html: str = "") -> RichLabel:
        """A row showing ``name`` (from the file) wrapped within the panel, with the name in its tooltip
        and "Copy Name" in its context menu."""
        label = self.add(key, code(name) or empty_html)
        if name:
            label.copy_name = name
            label.setToolTip(name_tooltip(name))
        return label


class Page(QScrollArea):
    """A scrollable column of sections, rebuilt from scratch on each update."""

    def __init__(self, on_link: Callable[[str], None]) -> None:
        super().__init__()
        self.on_link = on_link
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)   # it scrolls up and down only
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setStyleSheet(PANEL_STYLE)
        self.sections: dict[str, Section] = {}
        self._reset()

    def _reset(self) -> None:
        self.content = QWidget()
        # as wide as the panel: a word too long to wrap (a name, a link) is cut, never scrolled to sideways
        self.content.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.column = QVBoxLayout(self.content)
        self.column.setContentsMargins(8, 6, 8, 6)
        self.column.setSpacing(4)
        self.sections = {}
        self.setWidget(self.content)  # the old content widget is deleted by the scroll area

    def begin(self, subject: object = None) -> None:
        """Forget what is shown; each ``add_*`` call then appends. Rebuilding the same ``subject``
        (e.g. after validation) keeps the scroll position."""
        remembered = {title: s.expanded for title, s in self.sections.items()}
        same = subject is not None and subject == getattr(self, "_subject", None)
        self._scroll = self.verticalScrollBar().value() if same else 0
        self._subject = subject
        self._reset()
        self._remembered = remembered

    def end(self) -> None:
        self.column.addStretch(1)
        if self._scroll:
            QTimer.singleShot(0, lambda v=self._scroll: self.verticalScrollBar().setValue(v))

    def add_title(self, title: str, subtitle_html: str = "") -> None:
        """``title`` is plain text (a value's name: '<b>x</b>' is shown as written), escaped, cut and elided
        to one line; its tooltip and "Copy Name" have the rest."""
        label = ElidedLabel(title, TITLE_CHARS)
        label.setProperty("role", "title")
        self.title = label
        self.column.addWidget(label)
        if subtitle_html:
            sub = rich_label(subtitle_html, self.on_link)
            sub.setProperty("role", "subtitle")
            self.column.addWidget(sub)

    def add_section(self, title: str, body: QWidget, expanded: bool = True) -> Section:
        expanded = getattr(self, "_remembered", {}).get(title, expanded)
        section = Section(title, body, expanded)
        self.sections[title] = section
        self.column.addWidget(section)
        return section

    def add_form(self, title: str, rows: Sequence[tuple[str, str]], expanded: bool = True) -> Form:
        form = Form(self.on_link)
        for key, value in rows:
            form.add(key, value)
        self.add_section(title, form, expanded)
        return form
