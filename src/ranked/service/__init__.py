"""The HTTP service behind ``ranked serve`` (docs/service.md): boards over HTTP for clients
holding an API key.

:mod:`.app` is the ASGI application (routing, keys and scopes, problems, metrics, the
boards' lifetime); :mod:`.routes` the API's operations over :mod:`.registry`'s boards;
:mod:`.schemas` the msgspec types of every body, which also generate the OpenAPI document
(:mod:`.openapi`) and the API page (:mod:`.apipage`); :mod:`.keys` the API keys, stored
as hashes under the service's data directory; :mod:`.config` its settings.
"""
