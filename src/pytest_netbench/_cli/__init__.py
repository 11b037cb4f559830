"""The parts of the ``netbench`` command (its entry point is :mod:`pytest_netbench.cli`)."""
