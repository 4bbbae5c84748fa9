"""The MMLU-Pro document's server side (not in the browser wheel): its question browser."""
