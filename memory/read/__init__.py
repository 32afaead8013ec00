"""Read-only views of the persistent state: lists, history chunks, the explorer snapshot."""
