"""The worker process and the jobs it runs off the GUI thread."""
