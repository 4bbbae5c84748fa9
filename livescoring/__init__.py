"""Live scoring: a real language model behind lm-evaluation-harness's narrow interface.

Task-agnostic and web-agnostic: ``loglikelihood`` (a context and a continuation in; its
log-probability and whether it is the greedy continuation out) and ``generate_until`` (a context
and stop strings in; greedy text out). model.py finds and loads the model (the packaged SmolLM2 by
default), scorer.py answers a batch, worker.py owns the model in one thread behind a bounded queue
and streams generations. It imports neither Flask nor the engine: the benchmarks' side
(benchmarks/server/) builds prompts, reads answers, makes an app's one service and answers HTTP.
"""
