"""The user's history: the SQLite store and its migrations, streaks, stats, import/export of the log."""
