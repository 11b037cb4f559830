"""What a load is asked to do: options, their checks and defaults, targets, feeders,
stages, WebSocket and gRPC checks, mix and targets files, turned into a complete ``LoadSpec``."""
