"""The scoring lesson's widgets, one module each."""
