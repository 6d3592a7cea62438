"""The Transform dialog: which transform, its options, the tolerance its outputs are held to, and what becomes
of the result (the model replaced as one undo step, or a new window). A transform whose library is missing
says how to install it, and cannot be started."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import onnx.defs
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.errors import sentence
from onnxviz.model.matching.crossrun import Limits
from onnxviz.model.runner.compare import DEFAULT_TOLERANCE, Tolerance
from onnxviz.model.text import first_names
from onnxviz.model.transform.calibration import RANDOM_WARNING
from onnxviz.model.transform.catalog import (
    CALIBRATION_METHODS,
    LEVELS,
    OPSET,
    ORT_OPTIMIZE,
    QUANT_TYPES,
    QUANTIZE_DYNAMIC,
    QUANTIZE_INT4,
    QUANTIZE_STATIC,
    TOOLS,
    Settings,
    TransformError,
)
from onnxviz.ui.widgets.forms import ErrorLabel, error_style
from onnxviz.ui.widgets.names import message_text, plain_tooltip

BLOCK_SIZES = (16, 32, 64, 128, 256)
INPUT_FILTER = "Input files (*.npz *.npy *.pb);;All files (*)"
NAMES_SHOWN = 4


@dataclass(frozen=True)
class Request:
    """What the dialog asks for: the settings, the limits the outputs are held to, and where the result goes."""

    settings: Settings
    limits: Limits
    new_window: bool = False


class TransformDialog(QDialog):
    """Built for one model (its opset, its nodes kept in float); :attr:`request` is set when accepted."""

    def __init__(self, parent: QWidget | None, tool: str, *, opset: int = 0, excluded: tuple[str, ...] = (),
                 last: Settings | None = None, new_window: bool = False, folder: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Transform Model")
        self.request: Request | None = None
        self._folder = folder
        self._excluded = excluded
        start = last if last is not None and last.tool == tool else Settings(tool, opset=max(opset, 1))
        layout = QVBoxLayout(self)
        self.tool = QComboBox()
        for t in TOOLS.values():
            self.tool.addItem(t.title, t.name)
        form = QFormLayout()
        form.addRow("Transform:", self.tool)
        layout.addLayout(form)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.missing = QLabel()
        self.missing.setWordWrap(True)
        self.missing.setTextFormat(Qt.TextFormat.PlainText)
        self.missing.setStyleSheet(error_style())
        self.missing.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.summary)
        layout.addWidget(self.missing)
        self.pages = QWidget()  # one page of options per transform, the others hidden (they take no room)
        self._pages = QVBoxLayout(self.pages)
        self._pages.setContentsMargins(0, 0, 0, 0)
        self._page_widgets: list[QWidget] = []
        self.page = 0
        self._page_of: dict[str, int] = {}
        self._build_pages(start, opset)
        layout.addWidget(self.pages)
        layout.addWidget(self._inputs_box(start))
        layout.addWidget(self._tolerance_box())
        layout.addWidget(self._result_box(new_window))
        self.error = ErrorLabel()
        layout.addWidget(self.error)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok = self.buttons.addButton("Transform", QDialogButtonBox.ButtonRole.AcceptRole)
        self.ok.setDefault(True)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.tool.currentIndexChanged.connect(self._tool_changed)
        self.tool.setCurrentIndex(self.tool.findData(tool))
        self._tool_changed()
        self.setMinimumWidth(560)
        self._show_page(self.page)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._show_page(self.page)  # sized for its page once its layout is live

    # -- pages of options ----------------------------------------------------------------------------------
    def _build_pages(self, s: Settings, opset: int) -> None:
        plain = QLabel("No options: the tool decides what to fold, fuse and remove.")
        plain.setWordWrap(True)
        for name in TOOLS:
            self._page_of[name] = 0
        self._add_widget(plain)
        self.level = _combo(LEVELS, s.level)
        self._add_page(ORT_OPTIMIZE, ("Optimization level:", self.level), note=(
            "basic: constant folding and redundant nodes; extended: com.microsoft fusions (GELU, LayerNorm, "
            "attention...); all: also this CPU's data layouts."))
        self.opset = QSpinBox()
        self.opset.setRange(1, onnx.defs.onnx_opset_version())
        self.opset.setValue(s.opset if s.opset else max(1, opset))
        self._add_page(OPSET, ("Target opset:", self.opset),
                       note=f"The model uses opset {opset}." if opset else "")
        self.dyn_weight = _combo(QUANT_TYPES, s.weight_type)
        self.dyn_channel = QCheckBox("Per channel")
        self.dyn_channel.setChecked(s.per_channel)
        self.dyn_reduce = QCheckBox("Reduce range (7-bit weights, for CPUs without VNNI)")
        self.dyn_reduce.setChecked(s.reduce_range)
        self._add_page(QUANTIZE_DYNAMIC, ("Weight type:", self.dyn_weight), ("", self.dyn_channel),
                       ("", self.dyn_reduce), excluded=True)
        self._static_page(s)
        self.block = _combo(tuple(map(str, BLOCK_SIZES)), str(s.block_size))
        self.symmetric = QCheckBox("Symmetric (no zero points)")
        self.symmetric.setChecked(s.symmetric)
        self.accuracy = QComboBox()
        self.accuracy.addItem("not set", 0)
        for level in range(1, 5):
            self.accuracy.addItem(str(level), level)
        self.accuracy.setCurrentIndex(max(0, self.accuracy.findData(s.accuracy_level)))
        self._add_page(QUANTIZE_INT4, ("Block size:", self.block), ("", self.symmetric),
                       ("Accuracy level:", self.accuracy), excluded=True,
                       note="Weights of MatMul nodes become 4-bit MatMulNBits (com.microsoft).")

    def _static_page(self, s: Settings) -> None:
        self.fmt = QComboBox()
        self.fmt.addItem("QDQ (QuantizeLinear/DequantizeLinear pairs)", "qdq")
        self.fmt.addItem("QOperator (QLinearConv, QLinearMatMul...)", "qoperator")
        self.fmt.setCurrentIndex(max(0, self.fmt.findData(s.quant_format)))
        self.act_type = _combo(QUANT_TYPES, s.activation_type)
        self.st_weight = _combo(QUANT_TYPES, s.weight_type)
        self.st_channel = QCheckBox("Per channel")
        self.st_channel.setChecked(s.per_channel)
        self.st_reduce = QCheckBox("Reduce range (7-bit weights)")
        self.st_reduce.setChecked(s.reduce_range)
        self.method = _combo(CALIBRATION_METHODS, s.calibration_method)
        self._add_page(QUANTIZE_STATIC, ("Format:", self.fmt), ("Activations:", self.act_type),
                       ("Weights:", self.st_weight), ("", self.st_channel), ("", self.st_reduce),
                       ("Calibration:", self.method), excluded=True)

    def _inputs_box(self, s: Settings) -> QGroupBox:
        """The input files: the outputs are compared on them, a static quantization is calibrated on them."""
        box = QGroupBox("Inputs")
        form = QFormLayout(box)
        self.files = QListWidget()
        self.files.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.files.setMaximumHeight(70)
        self.files.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.files.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        for path in s.calibration:
            self._add_path(path)
        add_files, add_folder, remove = (QPushButton(t) for t in ("Add Files...", "Add Folder...", "Remove"))
        add_files.clicked.connect(self._add_files)
        add_folder.clicked.connect(self._add_folder)
        remove.clicked.connect(lambda: [self.files.takeItem(self.files.row(i)) for i in self.files.selectedItems()])
        buttons = QHBoxLayout()
        for b in (add_files, add_folder, remove):
            buttons.addWidget(b)
        buttons.addStretch()
        files = QWidget()
        column = QVBoxLayout(files)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.files)
        column.addLayout(buttons)
        self.inputs_note = QLabel()
        self.inputs_note.setWordWrap(True)
        self.samples = QSpinBox()
        self.samples.setRange(1, 1000)
        self.samples.setValue(s.samples)
        self.random_warning = QLabel(f"No files: {RANDOM_WARNING}.")
        self.random_warning.setWordWrap(True)
        self.random_warning.setStyleSheet(error_style())
        form.addRow(self.inputs_note)
        form.addRow("Files:", files)
        form.addRow("Or generated samples:", self.samples)
        form.addRow(self.random_warning)
        self._inputs_form = form
        self.files.model().rowsInserted.connect(self._files_changed)
        self.files.model().rowsRemoved.connect(self._files_changed)
        return box

    def _add_page(self, tool: str, *rows: tuple[str, QWidget], excluded: bool = False, note: str = "") -> None:
        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 0, 0, 0)
        for text, widget in rows:
            form.addRow(text, widget) if text else form.addRow(widget)
        if excluded:
            text = (f"Kept in float: {len(self._excluded)} node{'s' if len(self._excluded) != 1 else ''} "
                    f"({first_names(list(self._excluded), NAMES_SHOWN)})" if self._excluded else
                    "Kept in float: none (right-click nodes on the graph: Keep in Float).")
            kept = QLabel(message_text(text))
            kept.setWordWrap(True)
            kept.setTextFormat(Qt.TextFormat.PlainText)
            form.addRow(kept)
        if note:
            said = QLabel(note)
            said.setWordWrap(True)
            form.addRow(said)
        self._page_of[tool] = self._add_widget(page)

    def _add_widget(self, page: QWidget) -> int:
        self._pages.addWidget(page)
        self._page_widgets.append(page)
        page.hide()
        return len(self._page_widgets) - 1

    def _show_page(self, index: int) -> None:
        """The options of the chosen transform, the dialog sized for them."""
        self.page = index
        for k, page in enumerate(self._page_widgets):
            page.setVisible(k == index)
        self._fit()
        QTimer.singleShot(0, self._fit)  # again once the hidden page's layout requests are through

    def _fit(self) -> None:
        for layout in (self._pages, self.layout()):
            if layout is not None:
                layout.invalidate()
                layout.activate()
        self.resize(max(self.width(), self.minimumWidth()), self.sizeHint().height())

    def _files_changed(self, *_args: object) -> None:
        """Generated samples (and the warning about them) only for a static quantization without files."""
        static = self.tool.currentData() == QUANTIZE_STATIC
        none = self.files.count() == 0
        self._inputs_form.setRowVisible(self.samples, static)
        self.samples.setEnabled(none)
        self.random_warning.setVisible(static and none)
        self.inputs_note.setText(
            "Each .npz (arrays named after the inputs; an .npy or .pb for a model of one input), or a folder of "
            "them, is a sample: the model is calibrated on them, and its outputs compared on up to 8." if static
            else "Each .npz (arrays named after the inputs), .npy/.pb (one input) or folder of them is a sample: "
                 "the outputs are compared on up to 8 of them (without files: on 2 generated samples).")

    def _add_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Input Files", self._folder, INPUT_FILTER)
        for path in paths:
            self._add_path(path)

    def _add_path(self, path: str) -> None:
        self.files.addItem(path)
        self.files.item(self.files.count() - 1).setToolTip(plain_tooltip(path))

    def _add_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Folder of Input Files", self._folder)
        if path:
            self._add_path(path)

    # -- tolerance and result ---------------------------------------------------------------------------------
    def _tolerance_box(self) -> QGroupBox:
        box = QGroupBox("Outputs compared with the original's on the same inputs")
        form = QFormLayout(box)
        self.rtol, self.atol = _number(DEFAULT_TOLERANCE.rtol), _number(DEFAULT_TOLERANCE.atol)
        self.rtol.setToolTip("relative tolerance: |after - before| <= atol + rtol * |before|, element by element")
        pair = QHBoxLayout()
        for label, field in (("rtol", self.rtol), ("atol", self.atol)):
            pair.addWidget(QLabel(label))
            pair.addWidget(field)
        pair.addStretch()
        self.lossless_row = QWidget()
        self.lossless_row.setLayout(pair)
        pair.setContentsMargins(0, 0, 0, 0)
        self.min_sqnr = QLineEdit()
        self.min_sqnr.setPlaceholderText("no limit")
        self.min_sqnr.setMaximumWidth(110)
        form.addRow("Within (numpy.allclose):", self.lossless_row)
        form.addRow("Least output SQNR (dB):", self.min_sqnr)
        self._tolerance_form = form
        hint = QLabel("Beyond it, the result is not used and nothing changes.")
        hint.setWordWrap(True)
        form.addRow(hint)
        return box

    def _result_box(self, new_window: bool) -> QGroupBox:
        box = QGroupBox("Result")
        column = QVBoxLayout(box)
        self.replace_choice = QRadioButton("Replace this model (one step: Edit > Undo gives it back)")
        self.window_choice = QRadioButton("Open in a new window (this model unchanged)")
        group = QButtonGroup(box)
        for b in (self.replace_choice, self.window_choice):
            group.addButton(b)
            column.addWidget(b)
        (self.window_choice if new_window else self.replace_choice).setChecked(True)
        note = QLabel("The differences open after it (Diff), with the counts before and after.")
        note.setWordWrap(True)
        column.addWidget(note)
        return box

    # -- choosing ----------------------------------------------------------------------------------------------
    def _tool_changed(self, *_args: object) -> None:
        tool = TOOLS[self.tool.currentData()]
        self.summary.setText(sentence(tool.summary) + ".")
        missing = tool.missing()
        self.missing.setText(missing)
        self.missing.setVisible(bool(missing))
        self.ok.setEnabled(not missing)
        self._show_page(self._page_of[tool.name])
        self._tolerance_form.setRowVisible(self.lossless_row, tool.lossless)
        self._tolerance_form.setRowVisible(self.min_sqnr, not tool.lossless)
        self._files_changed()
        self.error.show_message("")

    def settings(self) -> Settings:
        """The settings as chosen; TransformError when they are not valid."""
        tool = self.tool.currentData()
        options: dict[str, object] = {"exclude": self._excluded} if TOOLS[tool].quantizes else {}
        options["calibration"] = tuple(self.files.item(k).text() for k in range(self.files.count()))
        if tool == ORT_OPTIMIZE:
            options.update(level=self.level.currentText())
        elif tool == OPSET:
            options.update(opset=self.opset.value())
        elif tool == QUANTIZE_DYNAMIC:
            options.update(weight_type=self.dyn_weight.currentText(), per_channel=self.dyn_channel.isChecked(),
                           reduce_range=self.dyn_reduce.isChecked())
        elif tool == QUANTIZE_STATIC:
            options.update(quant_format=self.fmt.currentData(), activation_type=self.act_type.currentText(),
                           weight_type=self.st_weight.currentText(), per_channel=self.st_channel.isChecked(),
                           reduce_range=self.st_reduce.isChecked(), calibration_method=self.method.currentText(),
                           samples=self.samples.value())
        elif tool == QUANTIZE_INT4:
            options.update(block_size=int(self.block.currentText()), symmetric=self.symmetric.isChecked(),
                           accuracy_level=int(self.accuracy.currentData()))
        return Settings(tool, **options)  # type: ignore[arg-type]

    def limits(self) -> Limits:
        if TOOLS[self.tool.currentData()].lossless:
            rtol, atol = float(self.rtol.text()), float(self.atol.text())  # ValueError: said by _accept
            if not (math.isfinite(rtol) and math.isfinite(atol) and rtol >= 0 and atol >= 0):
                raise ValueError(self.rtol.text())
            return Limits(Tolerance(rtol, atol))
        text = self.min_sqnr.text().strip()
        if not text:
            return Limits(elementwise=None)
        value = float(text)  # ValueError: said by _accept
        if not math.isfinite(value):
            raise ValueError(text)
        return Limits(elementwise=None, sqnr_db=value)

    def _accept(self) -> None:
        try:
            limits = self.limits()
        except ValueError:
            self.error.show_message("the tolerance must be numbers of 0 or more (rtol, atol)" if
                                    TOOLS[self.tool.currentData()].lossless else
                                    f"'{self.min_sqnr.text().strip()}' is not a number of decibels.")
            return
        try:
            settings = self.settings()
        except TransformError as exc:
            self.error.show_message(exc.message)
            return
        missing_files = [f for f in settings.calibration if not Path(f).exists()]
        if missing_files:
            self.error.show_message(f"{missing_files[0]} does not exist.")
            return
        self.request = Request(settings, limits, self.window_choice.isChecked())
        self.accept()


def _combo(values: tuple[str, ...], current: str) -> QComboBox:
    combo = QComboBox()
    combo.addItems(list(values))
    combo.setCurrentIndex(max(0, combo.findText(current)))
    return combo


def _number(value: float) -> QLineEdit:
    field = QLineEdit(f"{value:g}")
    field.setMaximumWidth(90)
    return field
