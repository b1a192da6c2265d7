"""Command-line tools under ``tools/``: bad arguments end in a clear argparse error (exit 2), before any model loads."""
import importlib.util

import pytest

from rlvr_dynamics.paths import REPO_ROOT


def _load(name):
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("argv, message", [(["--temperature", "3"], "--temperature must be in"),
                                           (["--candidates", "2-64"], "--candidates must be"),
                                           (["--candidates", "9:64"], "--candidates must be"),
                                           (["--problems", "2"], "--problems must be")])
def test_smollm_base_success_refuses_bad_arguments(argv, message, capsys):
    tool = _load("smollm_base_success")
    with pytest.raises(SystemExit) as exc:
        tool.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
