"""The bench scripts' modules: dropin_* for dropin_suite.py, fidelity_* for fidelity.py."""
