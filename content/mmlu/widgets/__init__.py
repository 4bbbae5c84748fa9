"""The MMLU document's widgets: one module each (its ``WIDGET``), with its template and optional script.

The list in ../paper.toml says which are shown and in what order. Standard library only: these
modules also run in the reader's browser, in Pyodide.
"""
