"""Every request Morphz accepts, declared once as a strict model (pydantic), by resource.

The API validates bodies and query strings with these models (`api.requests`), the OpenAPI
schema is generated from them, and the domain functions take the validated models. The value
rules they are built from are in `memory.requests.strict`; a refusal becomes the client's
error in `memory.requests.refusals`.
"""
