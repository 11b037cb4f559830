"""The machine a load runs on: its CPUs, the kernel's limits and counters, the checks
before the first socket, and the environment a stored run is keyed by."""
