"""bf16 autocast on CPUs that emulate it (rlvr_dynamics.grpo.runner.cpu_has_native_bf16, slow_bf16_warning): told
from /proc/cpuinfo text, warned about before training, never silently switched (the precision is part of the run)."""
from __future__ import annotations

from rlvr_dynamics.grpo.config import RunConfig
from rlvr_dynamics.grpo.runner import cpu_has_native_bf16, slow_bf16_warning

AVX2_ONLY = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse sse2 avx avx2 fma\n"
SAPPHIRE = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_bf16 amx_tile\n"
GRAVITON = "processor\t: 0\nFeatures\t: fp asimd bf16 i8mm\n"


def test_native_bf16_is_read_from_the_cpu_flags():
    assert cpu_has_native_bf16(AVX2_ONLY) is False
    assert cpu_has_native_bf16(SAPPHIRE) is True
    assert cpu_has_native_bf16(GRAVITON) is True
    assert cpu_has_native_bf16("") is None          # nothing to read: cannot tell


def test_warning_only_for_bf16_on_an_emulating_cpu():
    bf16 = RunConfig(name="x", model="smollm2-135m", mixed_precision="bf16")
    fp32 = RunConfig(name="x", model="smollm2-135m", mixed_precision="no")
    msg = slow_bf16_warning(bf16, "cpu", AVX2_ONLY)
    assert msg and bf16.run_id() in msg and "mixed_precision: 'no'" in msg
    assert slow_bf16_warning(bf16, "cpu", SAPPHIRE) is None
    assert slow_bf16_warning(bf16, "cpu", "") is None
    assert slow_bf16_warning(fp32, "cpu", AVX2_ONLY) is None
    assert slow_bf16_warning(RunConfig(name="x", model="smollm2-135m"), "cpu", AVX2_ONLY) is None  # auto: fp32 on CPU
