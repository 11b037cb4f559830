"""The engine's I/O on trio: a task per connection feeding the same loop-free rules
(``_engine.rules``) as asyncio does; one module per protocol and the share's run."""
