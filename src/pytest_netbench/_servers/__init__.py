"""Starting, watching and stopping servers under test, and the catalog of reference servers."""
