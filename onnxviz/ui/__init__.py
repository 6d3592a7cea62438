"""PySide6 widgets. Thin: they read the model layer and follow its notifications."""
