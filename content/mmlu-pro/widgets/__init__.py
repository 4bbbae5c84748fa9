"""The MMLU-Pro document's widgets, one module each."""
