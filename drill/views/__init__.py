"""Rich rendering for the CLI; nothing here holds logic the core needs."""
