"""The event history and its clock (R2–R8, R21–R26): appends, evaluations and ticks, and the
compiled active context."""
