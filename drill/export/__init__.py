"""The bank exported: an Anki deck and a Markdown cheat sheet."""
