"""The notebook front door: practice notebooks (build) and the IPython extension (magics).

``drill notebook`` writes plain nbformat-4 JSON (no Jupyter package needed to make a notebook);
``%load_ext drill`` loads :mod:`drill.notebook.magics`, which grades a cell through the same
isolated judge as ``drill grade`` (:mod:`drill.notebook.practice`).
"""
