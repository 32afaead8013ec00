"""REST views, one module per resource (docs/rest.md); the routes are in `api.urls`.

Thin by rule: check access (`api.base.ContextAPIView`), validate input (`api.requests`, with
the models of `memory.requests`), call one `memory` function, shape the answer
(`api.shapes`). What several resources share is in `api.views.common`.
"""
