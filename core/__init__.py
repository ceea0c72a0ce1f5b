"""The shared kernel: what every app uses and nothing in it knows an app.

Errors and the API error handler, the state-machine helper, authentication,
pagination, throttles and the counters and rates under them (the kernel's one
table), parsers, the request guard, logging, command argument
types, the readiness registry and what counts as CJK text and as a number
(`text`, which imports nothing: the parser processes read it). Imports Django and
DRF, never an app.
"""
