"""A real HTTP server speaking the OpenAI-compatible API, with failure modes.

Tests point `OPENAI_BASE_URL` at it instead of mocking the client, so timeouts,
HTTP errors and dropped connections go through the real socket code.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from retrieval.embeddings import HashingEmbedder

MODES = ("ok", "slow", "error", "drop")


class StubProvider:
    """Answers /v1/embeddings and /v1/chat/completions; `mode` picks a failure.

    - `ok`: answer normally (embeddings from a small hashing embedder, chat from
      `chat_reply(request_body)`, by default one claim quoting the first source);
    - `slow`: sleep `delay` seconds before answering (longer than the timeout);
    - `error`: HTTP 500;
    - `drop`: close the connection without answering.
    """

    def __init__(self) -> None:
        self.mode = "ok"
        self.delay = 2.0
        self.dimension = 32
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.chat_reply: Callable[[dict[str, Any]], str] = quote_first_source
        self._embedder = HashingEmbedder(self.dimension)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> StubProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def paths(self) -> list[str]:
        return [path for path, _, _ in self.requests]

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if path == "/v1/embeddings":
            vectors = self._embedder.embed(body["input"])
            return {
                "object": "list",
                "data": [
                    {"object": "embedding", "index": i, "embedding": v.tolist()}
                    for i, v in enumerate(vectors)
                ],
                "model": body["model"],
            }
        if path == "/v1/chat/completions":
            return {
                "id": "chatcmpl-stub",
                "object": "chat.completion",
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": self.chat_reply(body),
                        },
                        "finish_reason": "stop",
                    }
                ],
            }
        raise KeyError(path)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                stub.requests.append((self.path, body, dict(self.headers)))
                if stub.mode == "drop":
                    self.close_connection = True
                    return
                if stub.mode == "slow":
                    time.sleep(stub.delay)
                if stub.mode == "error":
                    self._send(500, {"error": {"message": "stub failure"}})
                    return
                try:
                    payload = stub.answer(self.path, body)
                except KeyError:
                    self._send(404, {"error": {"message": "no such path"}})
                    return
                self._send(200, payload)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to do

        return Handler


_SOURCE = re.compile(
    r"^\[(S\d+)\][^\n]*\n(.+?)(?=\n\n\[S\d+\]|\n\nQuestion:|\Z)", re.S | re.M
)


def sources_in(body: dict[str, Any]) -> dict[str, str]:
    """`{id: text}` of the numbered sources in a chat request."""
    prompt = body["messages"][-1]["content"]
    return {match[1]: match[2] for match in _SOURCE.finditer(prompt)}


def first_sentence(text: str) -> str:
    return re.split(r"(?<=[。！？.!?])\s*", text.strip(), maxsplit=1)[0]


def quote_first_source(body: dict[str, Any]) -> str:
    sources = sources_in(body)
    if not sources:
        return '{"claims": []}'
    source_id, text = next(iter(sources.items()))
    claim = {"text": first_sentence(text), "source_ids": [source_id]}
    return json.dumps({"claims": [claim]}, ensure_ascii=False)
