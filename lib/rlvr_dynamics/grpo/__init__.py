"""Real GRPO training with TRL at CPU scale (training only; reading finished runs is :mod:`rlvr_dynamics.runs`).

- :mod:`.config`: ``RunConfig`` and the mapping of P1's knobs (μ, K_ref, η, G) onto TRL (torch-free).
- :mod:`.tasks`, :mod:`.tokenizer`: exact-reward tasks and evaluation families; the character tokenizer.
- :mod:`.model_sizes`, :mod:`.tiny_model`, :mod:`.smollm`: tiny Llama sizes and warm start; SmolLM2-135M offline.
- :mod:`.runner`: train, resume, evaluate (TRL's ``GRPOTrainer``); :mod:`.store`: what a run writes to ``data/runs``.
- :mod:`.instrumentation`: ``GRPODynamicsCallback``; :mod:`.fields`: the names it logs (torch-free);
  :mod:`.logprob_changes`: the finite-difference gap alignment of an update; :mod:`._trl_compat`: every use of
  TRL's private API, with the tested TRL range; :mod:`.pilot`: the learning-rate pilot rule.
- :mod:`.evaluation`: accuracy; :mod:`.panel`: the expected reward on a fixed prompt panel during training (schedule,
  panel draw, estimate); :mod:`.cli`: ``rlvr-dynamics train``.

Heavy imports (torch, TRL) happen inside the modules that need them, never here.
"""
