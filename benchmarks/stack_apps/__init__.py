"""Tiny ASGI apps for the web-stack comparison (benchmarks/service_stack.py).

One module per stack; each has app factories (``uvicorn --factory``, ``granian
--factory``): ``constant_app`` (``GET /const`` answers ``{"member":"m1","score":1,
"rank":1}``) and, where the comparison has one, ``rank_app`` (``GET
/v1/boards/{board}/members/{member}`` reads a member's score and rank from a loaded
``memory://`` board, see :mod:`._board`).
"""
