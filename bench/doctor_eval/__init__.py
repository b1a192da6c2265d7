"""Judging the run doctor (``bench/bench_doctor.py``), outside the product package.

- :mod:`.corpus`: the labelled corpus (simulated, project and shared runs; dev and test parts);
- :mod:`.forecasts`: the forecast protocol, its baselines, the conformal calibration (writes the table
  :mod:`rlvr_dynamics.doctor.forecast` reads) and the forecast benchmark;
- :mod:`.reading`: the evidence reading's benchmark;
- :mod:`.detectors`: the detectors' benchmark and a per-run confusion table;
- :mod:`.live`: the live ``RunDoctor``'s benchmark.

``bench/`` is on ``sys.path`` when a script of it runs (``python bench/bench_doctor.py``) and in the tests
(``tests/conftest.py``): ``from doctor_eval import corpus``.
"""
