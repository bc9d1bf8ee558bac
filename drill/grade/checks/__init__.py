"""Checks and judgements every task shares (a task folder imports these, never another task)."""
