"""Whiteboard sessions: write a task from its template, re-graded on every save. Torch-free."""
