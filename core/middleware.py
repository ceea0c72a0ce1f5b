"""Request bodies: refused from their headers before anything reads them, or read
only up to the limit of the view they are sent to (`core.body_limits`)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from typing import IO

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpRequest, HttpResponse, JsonResponse

from core.api_errors import error_body
from core.body_limits import BodyLimit, body_limit_for

_DIGITS = frozenset("0123456789")
# What a server may read of a body left unread before it closes the connection:
# gunicorn's own cap, and where the development server is stopped from reading.
_DRAIN_BYTES = 64 * 1024
_READ_BYTES = 64 * 1024
# A body sent without a length is kept in memory up to this, on disk past it.
_SPOOL_MEMORY_BYTES = 1024 * 1024


class RequestBodyGuardMiddleware:
    """First in `MIDDLEWARE`, before anything reads a body:

    - `400 malformed_request` for a `Content-Length` that is not a number;
    - `413` (the view's `error_code`, `request_too_large` by default) for a body
      declared larger than the view's limit, answered unread;
    - a body without a `Content-Length` (`Transfer-Encoding: chunked`) is read up
      to the limit and refused past it, or refused unread (`411 length_required`)
      where its size must be known first (the upload) or the server does not
      decode it (Django's development server).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        declared = request.META.get("CONTENT_LENGTH") or ""
        if declared and not set(declared) <= _DIGITS:
            return _refuse(
                request,
                400,
                "malformed_request",
                "Content-Length must be a whole number of bytes.",
            )
        limit = body_limit_for(request)
        if declared:
            refusal = _refuse_declared(request, int(declared), limit)
        elif "HTTP_TRANSFER_ENCODING" in request.META:
            refusal = _read_undeclared(request, limit)
        else:
            refusal = None
        if refusal is not None:
            return refusal
        response = self.get_response(request)
        if declared and int(declared) > _DRAIN_BYTES:
            _stop_the_development_server_reading(request, response)
        return response


def _max_bytes(request: HttpRequest, limit: BodyLimit) -> int:
    """The view's limit; Django itself reads no body but a multipart one past
    `DATA_UPLOAD_MAX_MEMORY_SIZE` (and would refuse it with a traceback)."""
    maximum = limit.max_bytes()
    in_memory = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if request.content_type != "multipart/form-data" and in_memory is not None:
        return min(maximum, in_memory)
    return maximum


def _refuse_declared(
    request: HttpRequest, declared: int, limit: BodyLimit
) -> HttpResponse | None:
    maximum = _max_bytes(request, limit)
    if declared <= maximum:
        return None
    return _refuse(
        request,
        413,
        limit.error_code,
        f"The request body is {declared} bytes; the limit here is {maximum} bytes.",
    )


def _read_undeclared(request: HttpRequest, limit: BodyLimit) -> HttpResponse | None:
    """Read a body sent without a length up to the limit, and hand it on as if it
    had declared one: Django reads only as many bytes as `Content-Length` says."""
    # Servers that decode chunked bodies say so (gunicorn); the development
    # server hands over a stream that ends where a Content-Length would.
    if limit.length_required or not request.META.get("wsgi.input_terminated"):
        return _refuse(
            request,
            411,
            "length_required",
            "This request needs a Content-Length header: its size is checked "
            "before it is read.",
        )
    maximum = _max_bytes(request, limit)
    try:
        body, size = _read_at_most(request.META["wsgi.input"], maximum + 1)
    except Exception:  # whatever the server raises for a malformed or cut chunk
        return _refuse(
            request, 400, "malformed_request", "The request body could not be read."
        )
    if size > maximum:
        body.close()
        return _refuse(
            request,
            413,
            limit.error_code,
            f"The request body is larger than the limit here, {maximum} bytes.",
        )
    request.META["CONTENT_LENGTH"] = str(size)
    # WSGIRequest made its stream from the declared length (none: empty).
    request._stream = LimitedStream(body, size)
    return None


def _read_at_most(stream: IO[bytes], size: int) -> tuple[IO[bytes], int]:
    body = tempfile.SpooledTemporaryFile(max_size=_SPOOL_MEMORY_BYTES)  # noqa: SIM115
    read = 0
    while read < size:
        piece = stream.read(min(_READ_BYTES, size - read))
        if not piece:
            break
        body.write(piece)
        read += len(piece)
    body.seek(0)
    return body, read


def _stop_the_development_server_reading(
    request: HttpRequest, response: HttpResponse
) -> None:
    """Django's development server (runserver, the tests' live server) reads what
    is left of a declared body after the response, at once into one buffer
    (`ServerHandler.close`): a whole refused body. Its stream is cut here, and
    without a Content-Length the server closes the connection instead of reading
    the rest as the next request. Other servers cap their own drain."""
    stream = request.META.get("wsgi.input")
    if isinstance(stream, LimitedStream):
        stream.limit = 0
        if response.has_header("Content-Length"):
            del response["Content-Length"]


def _refuse(
    request: HttpRequest, status: int, error_code: str, detail: str
) -> HttpResponse:
    if request.path.startswith("/api/"):
        response = JsonResponse(error_body(error_code, detail), status=status)
    else:
        response = HttpResponse(detail, status=status, content_type="text/plain")
    # Outside CommonMiddleware, which would set it: a client must not have to wait
    # for the close (the server may still be reading the body it refused).
    response["Content-Length"] = len(response.content)
    _stop_the_development_server_reading(request, response)
    return response
