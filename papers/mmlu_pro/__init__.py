"""MMLU-Pro: A More Robust and Challenging Multi-Task Language Understanding Benchmark (Wang et al. 2024), annotated."""
