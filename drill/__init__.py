"""drill: practice for LLM / Transformer interviews from the terminal."""

__version__ = "0.1.0"
