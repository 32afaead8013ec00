"""Context transactions (R9–R20): the language, its rules, retirement, the commit SQL and the engine.

`memory.tx.engine.submit_transaction` is the one way the cognitive state changes."""
