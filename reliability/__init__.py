"""The reliability suite: scripts run on demand (see RELIABILITY.md) and the helpers they
share with the short versions in the test suite."""
