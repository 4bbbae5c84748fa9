"""Live scoring: a real language model answers multiple-choice questions the reference way.

Dataset-agnostic and web-agnostic: a question with K options and a prompt format come in, letter
probabilities (or full-option log-likelihoods) go out. model.py finds and loads the model (the
packaged SmolLM2 by default), scorer.py scores one question, worker.py owns the model in one
thread behind a bounded queue. It imports neither Flask nor the engine: the benchmarks' web side
(benchmarks/server/) makes an app's one service and answers HTTP.
"""
