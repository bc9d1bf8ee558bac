"""Practice: quizzes, review, mock interviews, answer parsing and scheduling; knows nothing of Typer."""
