"""Morphz's domain: the rules of a context's memory, as plain Python beside the Django models.

Every write goes through one function per verb:

- `memory.contexts.create_context`, `update_context_settings`,
  `delete_context`, `issue_token`, `revoke_token`: contexts and API tokens
- `memory.timeline.events.append_event`, `register_action`, `memory.timeline.bulk.append_events`:
  the event history
- `memory.tx.engine.submit_transaction`: the cognitive state (frames, relations, retirement)
- `memory.timeline.evaluation.evaluate`: claim inputs, advance the tick, compile the context
- `memory.search.indexer.drain`, `rebuild`: the search index (the only writer of `SearchDocument`)

Reads: `memory.recall.graph.recall`, `memory.search.query.search`, `memory.read.*`.
JSON shapes: `memory.shapes` (one TypedDict and one builder per shape: context, event, relation,
revision, transaction, recall node, search hit, compiled observation); the API, the
explorer, recall, search and compile all build through it.
The package does not import its modules here: Django loads `memory` as an app before models.
"""
