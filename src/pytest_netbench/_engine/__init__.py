"""_engine package."""
