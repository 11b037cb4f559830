"""_stats package."""
