"""The version of onnxviz, in one place below everything: the package exports it (``onnxviz.__version__``),
``onnxviz --version`` and Help > About show it, without importing the package's API."""

VERSION = "0.1.0"
