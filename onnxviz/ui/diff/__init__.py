"""The model diff in the window: File > Compare With..., the Differences dock, Run Both."""
