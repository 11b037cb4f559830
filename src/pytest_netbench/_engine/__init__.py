"""The load engine: the run rules written once (``rules``), the I/O of each loop (``asyncio_io``,
``trio_io``) and where a load's shares run (``shares``). docs/architecture.md has a line per
module."""
