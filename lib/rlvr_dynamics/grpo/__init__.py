"""Real GRPO training with TRL at CPU scale: tasks, tiny models, SmolLM2, run configs, runner, instrumentation.

Modules: :mod:`.tasks` (exact-reward tasks, eight evaluation families), :mod:`.tokenizer` (character tokenizer),
:mod:`.tiny_model` (three tiny Llama sizes + warm start), :mod:`.smollm` (SmolLM2-135M offline),
:mod:`.config` (``RunConfig``, μ/K_ref mapping), :mod:`.runner` (train, resume, logs), :mod:`.instrumentation`
(``GRPODynamicsCallback``), :mod:`.evaluation`, :mod:`.cli` (``train_main``). Heavy imports (torch, TRL) are lazy.
"""
