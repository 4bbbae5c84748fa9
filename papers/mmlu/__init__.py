"""Measuring Massive Multitask Language Understanding (Hendrycks et al. 2020), annotated."""
