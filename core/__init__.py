"""The shared kernel: what every app uses and nothing in it knows an app.

Errors and the API error handler, the state-machine helper, authentication,
pagination, throttles, parsers, the request guard, logging, command argument
types and the readiness registry. Imports Django and DRF, never an app.
"""
