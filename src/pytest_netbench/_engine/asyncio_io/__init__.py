"""The engine's I/O on asyncio and uvloop: callback protocols that feed the loop-free rules
(``_engine.rules``); one module per protocol and the share's run."""
