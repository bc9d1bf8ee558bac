"""drill: practice for LLM / Transformer interviews from the terminal."""

__version__ = "0.1.0"


def load_ipython_extension(ipython) -> None:
    """``%load_ext drill``: the %drill / %%drill magics (imported here only: ``import drill`` stays free of IPython)."""
    from drill.notebook.magics import load

    load(ipython)
