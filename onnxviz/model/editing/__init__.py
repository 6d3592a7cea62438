"""Undoable commands and the editing API the Document exposes."""
