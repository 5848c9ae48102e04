"""The HTTP service behind ``ranked serve``: boards over HTTP and WebSocket for clients
holding an API key. :mod:`ranked.service.keys` stores those keys (as hashes) under the
service's data directory and answers, on every request, which key a request presents.
"""
