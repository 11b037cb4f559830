"""_proto package."""
