"""_report package."""
