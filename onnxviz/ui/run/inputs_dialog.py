"""The dialog that says what each graph input is filled with before a run."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.model.runner import RunError
from onnxviz.model.runner.input_files import input_samples, inputs_file_names
from onnxviz.model.runner.inputs import (
    GENERATED_STRING,
    InputSpec,
    dynamic_dim,
    save_inputs_file,
)
from onnxviz.model.runner.sizes import settable
from onnxviz.model.text import display_name
from onnxviz.ui.run.input_sources import NORMALIZATIONS, SOURCE_LABELS, InputChoice, InputPlan, PendingFeeds
from onnxviz.ui.widgets.names import message_text

ARRAY_FILES = "Arrays (*.npy *.npz *.pb);;All files (*)"
AUTO = -1  # a dimension's spin box at this value: chosen when the model runs
IMAGE_FILES = "Images (*.png *.jpg *.jpeg *.bmp *.gif *.webp);;All files (*)"


def _combo(items: dict[str, str], current: str) -> QComboBox:
    combo = QComboBox()
    for key, label in items.items():
        combo.addItem(label, key)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


def source_labels(spec: InputSpec) -> dict[str, str]:
    """The sources that make sense for the input's element type, labelled for it."""
    kind = spec.dtype.kind
    labels = dict(SOURCE_LABELS)
    if kind in "OSU":
        return {"text": labels["text"], "random": f'The string "{GENERATED_STRING}"', "zeros": "Empty strings",
                "file": labels["file"]}
    del labels["text"]
    if kind != "f":
        del labels["uniform"]
        integers = f"Random 0 - {spec.random_high - 1}"
        labels["random"] = {"b": "Random true/false", "i": integers, "u": integers}.get(kind, "Random")
    if not spec.looks_like_image:
        del labels["image"]
    return labels


class _InputRow:
    """The widgets of one input in the grid."""

    def __init__(self, spec: InputSpec, choice: InputChoice, grid: QGridLayout, row: int) -> None:
        self.spec = spec
        dims = "?" if spec.shape is None else ", ".join(spec.dim_texts()) or "scalar"
        kind = _shown(f"{spec.type_text} [{dims}]")  # dims are the file's dim_params: text, never markup
        self.name = name = QLabel(f"<b>{_shown(spec.name)}</b><br><span style='color:gray'>{kind}</span>")
        self.source = _combo(source_labels(spec), choice.source)
        self.path = QLineEdit(choice.path)
        self.path.setPlaceholderText("file...")
        self.path.setMinimumWidth(160)
        self.text: QPlainTextEdit | None = None  # in the file's place, for strings typed here
        if spec.dtype == object:
            self.text = QPlainTextEdit(choice.text)
            self.text.setPlaceholderText("strings, separated by commas or one per line")
            self.text.setTabChangesFocus(True)
            self.text.setFixedHeight(3 * self.text.fontMetrics().lineSpacing() + 12)
            grid.addWidget(self.text, row, 2)
        self.browse = QPushButton("Browse...")
        self.layout = _combo({"NCHW": "NCHW", "NHWC": "NHWC"}, choice.layout)
        self.normalization = _combo(NORMALIZATIONS, choice.normalization)
        for col, widget in enumerate((name, self.source, self.path, self.browse, self.layout, self.normalization)):
            grid.addWidget(widget, row, col)
        self.source.currentIndexChanged.connect(self.update_enabled)
        self.browse.clicked.connect(self.choose_file)
        self.update_enabled()

    def update_enabled(self) -> None:
        source = self.source.currentData()
        from_file = source in ("file", "image")
        self.path.setEnabled(from_file)
        self.browse.setEnabled(from_file)
        if self.text is not None:
            self.text.setVisible(source == "text")
        self.path.setVisible(source != "text")
        image = source == "image" and self.spec.looks_like_image
        self.layout.setEnabled(image)
        self.normalization.setEnabled(image)

    def choose_file(self) -> None:
        image = self.source.currentData() == "image"
        path, _ = QFileDialog.getOpenFileName(self.path.window(), f"Input '{display_name(self.spec.name, 80)}'",
                                              self.path.text(), IMAGE_FILES if image else ARRAY_FILES)
        if path:
            self.path.setText(path)

    def choice(self) -> InputChoice:
        return InputChoice(self.source.currentData(), self.path.text().strip(), self.layout.currentData(),
                           self.normalization.currentData(), self.text.toPlainText() if self.text else "")

    def set_file(self, path: str) -> None:
        self.source.setCurrentIndex(self.source.findData("file"))
        self.path.setText(path)


class InputsDialog(QDialog):
    """One row per graph input, the symbolic dimensions, the seed; Run builds the arrays."""

    def __init__(self, specs: list[InputSpec], plan: InputPlan, model_name: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Run {display_name(model_name, 80)}")
        self.specs = specs
        self.feeds: PendingFeeds | None = None  # what Run was accepted with
        self.dim_boxes: dict[str, QSpinBox] = {}
        self.found = dict(plan.found)
        self.samples: tuple[str, ...] = plan.samples
        layout = QVBoxLayout(self)
        intro = QLabel(f"Choose the inputs of <b>{_shown(model_name)}</b>. Generated values use the seed below; "
                       "sizes of symbolic dimensions are remembered.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        dims = settable(specs)
        if dims:
            layout.addWidget(self._dims_box(dims, plan.dims))
        layout.addWidget(self._inputs_box(plan), 1)
        layout.addLayout(self._seed_row(plan.seed))
        layout.addLayout(self._samples_row())
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setTextFormat(Qt.TextFormat.PlainText)  # messages quote file and input names: never markup
        self.error.setStyleSheet("color: #c0392b;")
        self.error.hide()
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.run_button = buttons.addButton("Run", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.run_button.setDefault(True)  # once inside the dialog, else showing it makes Browse... the default
        for row in self.rows:  # an error is about the entries as they were: any change answers it
            row.path.textChanged.connect(self.error.hide)
            row.source.currentIndexChanged.connect(self.error.hide)
            if row.text is not None:
                row.text.textChanged.connect(self.error.hide)
        for spin in self.dim_boxes.values():
            spin.valueChanged.connect(self.error.hide)
        self.resize(980, min(680, 290 + 44 * len(specs) + 34 * len(dims)))

    def _dims_box(self, dims: list[str], known: dict[str, int]) -> QGroupBox:
        box = QGroupBox("Dimensions (auto: sizes the graph suggests, else 1, others tried if those do not run)")
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        for d in dims:
            spin = QSpinBox()
            spin.setRange(AUTO, 1 << 20)
            ran = self.found.get(d)
            spin.setSpecialValueText("auto" if ran is None else f"auto (ran: {ran})")
            spin.setValue(known.get(d, AUTO))
            spin.setFixedWidth(140)
            spin.setToolTip("The size of this dimension in every generated input; auto: onnxviz chooses one that "
                            "runs" + ("" if ran is None else f" (the last run ran with {ran}, tried first)"))
            self.dim_boxes[d] = spin
            label = QLabel(f"{display_name(d, 80)} ({_where(d, self.specs)}):")
            label.setTextFormat(Qt.TextFormat.PlainText)  # names from the file: never markup
            form.addRow(label, spin)
        return box

    def _samples_row(self) -> QHBoxLayout:
        """The samples comparisons run over (Compare Engines, Compare with Model..., Run Both): each measure is
        then given as its mean and worst over them."""
        row = QHBoxLayout()
        row.addWidget(QLabel("Samples for comparisons:"))
        self.samples_label = QLabel()
        self.samples_label.setTextFormat(Qt.TextFormat.PlainText)
        row.addWidget(self.samples_label, 1)
        files = QPushButton("Choose Files...")
        files.setToolTip(".npz files of arrays named after the inputs, one sample each")
        files.clicked.connect(lambda: self.choose_samples())
        folder = QPushButton("Choose Folder...")
        folder.setToolTip("A folder of input_N.pb files (one sample), of test_data_set_N folders or of .npz files")
        folder.clicked.connect(lambda: self.choose_samples(folder=True))
        clear = QPushButton("Clear")
        clear.clicked.connect(lambda: self.set_samples(()))
        for w in (files, folder, clear):
            row.addWidget(w)
        self.set_samples(self.samples)
        return row

    def choose_samples(self, paths: list[str] | None = None, folder: bool = False) -> None:
        if paths is None:
            if folder:
                chosen = QFileDialog.getExistingDirectory(self, "Samples Folder")
                paths = [chosen] if chosen else []
            else:
                paths, _ = QFileDialog.getOpenFileNames(self, "Samples", "", "NumPy archives (*.npz);;All files (*)")
        if not paths:
            return
        try:
            found = input_samples(paths, self.specs)
        except RunError as exc:
            self._show_error(exc.message)
            return
        self.set_samples(tuple(str(sample.path) for sample in found))

    def set_samples(self, samples: tuple[str, ...]) -> None:
        self.samples = samples
        if not samples:
            self.samples_label.setText("none: comparisons run once, on the inputs above")
        else:
            first = Path(samples[0])
            self.samples_label.setText(f"{len(samples)} sample{'s' if len(samples) != 1 else ''} from "
                                       f"{display_name(str(first.parent), 60)} ({display_name(first.name, 40)}"
                                       + (", ..." if len(samples) > 1 else "") + "): each measure as its mean and "
                                       "worst over them")

    def _inputs_box(self, plan: InputPlan) -> QGroupBox:
        box = QGroupBox(f"Inputs ({len(self.specs)})")
        inner = QWidget()
        grid = QGridLayout(inner)
        grid.setColumnStretch(2, 1)
        strings = any(s.dtype == object for s in self.specs)
        for col, title in enumerate(("Input", "Values", "File or strings" if strings else "File", "", "Layout",
                                     "Normalisation")):
            grid.addWidget(QLabel(f"<i>{title}</i>"), 0, col)
        self.rows = [_InputRow(s, plan.choices.get(s.name, InputChoice()), grid, k + 1)
                     for k, s in enumerate(self.specs)]
        grid.setRowStretch(len(self.specs) + 1, 1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(inner)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        QVBoxLayout(box).addWidget(scroll)
        return box

    def _seed_row(self, seed: int) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addWidget(QLabel("Seed:"))
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setValue(seed)
        row.addWidget(self.seed)
        row.addStretch(1)
        load = QPushButton("Load Inputs (.npz)...")
        load.clicked.connect(self.load_npz)
        save = QPushButton("Save Inputs (.npz)...")
        save.clicked.connect(self.save_npz)
        row.addWidget(load)
        row.addWidget(save)
        return row

    def plan(self) -> InputPlan:
        return InputPlan({r.spec.name: r.choice() for r in self.rows},
                         {d: box.value() for d, box in self.dim_boxes.items() if box.value() != AUTO},
                         self.seed.value(), self.found, self.samples, asked=True)

    def load_npz(self, path: str = "") -> None:
        if not path:
            path, _ = QFileDialog.getOpenFileName(self, "Load Inputs", "", "NumPy archives (*.npz)")
        if not path:
            return
        try:
            names = set(inputs_file_names(path))  # the arrays are read, each checked, by Run
        except RunError as exc:
            self._show_error(exc.message)
            return
        matched = [r for r in self.rows if r.spec.name in names]
        for r in matched:
            r.set_file(path)
        if not matched:
            self._show_error(f"{Path(path).name} has no array named after an input of this model.")

    def save_npz(self, path: str = "") -> None:
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Save Inputs", "inputs.npz", "NumPy archives (*.npz)")
        if not path:
            return
        try:
            save_inputs_file(path, self.plan().feeds(self.specs))
        except OnnxvizError as exc:  # a refused input, or a file that could not be written (in one sentence)
            self._show_error(exc.message)

    def accept(self) -> None:
        try:
            self.feeds = self.plan().prepare(self.specs)  # big generated inputs are made in the run's thread
        except RunError as exc:
            self._show_error(exc.message)
            return
        super().accept()

    def _show_error(self, message: str) -> None:
        self.error.setText(message_text(sentence(message)))
        self.error.show()


def _shown(name: str) -> str:
    """A model or input name inside rich text: invisible characters escaped, no markup, not too long."""
    return html.escape(display_name(name, 80))


def _where(dim: str, specs: list[InputSpec]) -> str:
    """Where a dimension is: ``axis 0 of input 'x', declared -1`` for one onnxviz named INPUT[AXIS], else the
    axes that have it (``input_ids[1], attention_mask[1]``), so each can be set by name or by input and axis."""
    places = []
    for s in specs:
        for axis, d in enumerate(s.shape or ()):
            if d == dim and (axis in s.dynamic_axes or axis in s.unnamed_axes):
                how = "declared -1" if axis in s.dynamic_axes else "declared with neither a size nor a name"
                return f"axis {axis} of input '{display_name(s.name, 80)}', {how}"
            if d == dim or (isinstance(d, str) and dim in _names_in(d)):
                places.append(display_name(dynamic_dim(s.name, axis), 60) + ("" if d == dim else
                                                                             f" = {display_name(str(d), 40)}"))
    shown = ", ".join(places[:3]) + (f" and {len(places) - 3} more" if len(places) > 3 else "")
    return shown or "in an expression"


def _names_in(dim: str) -> list[str]:
    from onnxviz.model.runner.sizes import expression_names

    return expression_names(dim) or []
