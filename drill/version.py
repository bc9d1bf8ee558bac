"""drill's version: its own module, so modules that stamp it (the compiled cache) need not import the package root."""

__version__ = "0.1.0"
