"""Running one load: the public entry points (``http_load`` and its kin) and the attempts
of a load that may be run again."""
