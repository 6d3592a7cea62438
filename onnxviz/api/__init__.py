"""The Python API, exported from the package itself (``onnxviz.show``, ``onnxviz.compare``, ...).

* :mod:`.models` - what counts as a model (a path, a ``ModelProto``, its bytes, an ``onnx_ir`` model, an
  object with ``model_proto``) and how it becomes a document or a file;
* :mod:`.commands` - a subcommand run in this process, its ``--json`` object handed back;
* :mod:`.results` - ``compare`` and ``diff``, their results as typed dataclasses;
* :mod:`.running` - ``run``, its values as numpy arrays;
* :mod:`.show` and :mod:`.protocol` - ``show``: a window in a process of its own, driven from here.

Nothing here imports Qt: ``show`` leaves the caller's interpreter (a notebook's kernel) free of it.
"""
