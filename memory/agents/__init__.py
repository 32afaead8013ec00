"""Agents plug in (R45-R47): the model protocol for a context and taking model replies apart.

- `memory.agents.protocol`: `context_protocol(context)`, the protocol of `morphz_protocol`
  with this context's settings filled in.
- `memory.agents.replies`: `take_apart_reply(context_id, reply, ...)`, which commits the
  reply's transactions, runs its memory reads (`memory.agents.reads`), registers its other
  tool calls as actions and records its text as an agent message; `memory.agents.feedback`
  renders the outcome for the model.
"""
