"""The pytest plugin's private parts; :mod:`pytest_netbench.plugin` wires them into pytest."""
