"""Start llama-cpp-python's server with llama.cpp's weight repacking off: bench/conformance_llama_cpp.py's other server.

Run by that package's own interpreter (a virtual environment outside the repository), with the
server's usual arguments:

    /tmp/llamacpp-venv/bin/python bench/llama_cpp_serve.py --model GGUF --logits_all true ...

Why: on this project's machine (a Xeon with AMX) llama-cpp-python 0.3.36 repacks the Q4_1 and Q8_0
weights at load (into llama.cpp's AMX buffer there), and the first ``llama_decode`` then dies with
SIGSEGV, with or without ``--logits_all``. The model's ``use_extra_bufts`` switch (no repacking: the weights
stay as the GGUF has them, read by ggml's plain CPU kernels) avoids it, but the server has no
setting for it, so this sets the default it reads.
"""
import llama_cpp.llama_cpp as native
from llama_cpp.server.__main__ import main

_defaults = native.llama_model_default_params


def _without_repacking():
    params = _defaults()
    params.use_extra_bufts = False
    return params


native.llama_model_default_params = _without_repacking

if __name__ == "__main__":
    main()
