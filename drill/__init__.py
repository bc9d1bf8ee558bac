"""drill: practice for LLM / Transformer interviews from the terminal."""

from drill.version import __version__

__all__ = ["__version__", "load_ipython_extension"]


def load_ipython_extension(ipython) -> None:
    """``%load_ext drill``: the %drill / %%drill magics (imported here only: ``import drill`` stays free of IPython)."""
    from drill.notebook.magics import load

    load(ipython)
