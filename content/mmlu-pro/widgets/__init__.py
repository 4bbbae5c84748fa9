"""The MMLU-Pro paper's widgets, one module each."""
