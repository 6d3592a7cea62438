"""The model layer: everything that is not a widget. Never imports Qt."""
