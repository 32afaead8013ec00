"""Graph recall along the cognitive graph (R27–R30)."""
