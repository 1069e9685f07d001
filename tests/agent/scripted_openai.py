"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions API with scripted replies.

Each POST /v1/chat/completions takes the next scripted entry: a reply text (answered as a completion with
usage counts) or an int HTTP status (e.g. 429, answered with an OpenAI-style error body, so the client's
retry-with-backoff is exercised). Every request body is recorded for the test to read back.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedOpenAI:
    def __init__(self, script: list[str | int]) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        self.auth: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body: dict, headers: dict | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "test"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append(body)
                owner.auth.append(self.headers.get("Authorization", ""))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                if not owner.script:
                    self._send(500, {"error": {"message": "script exhausted", "type": "server_error"}})
                    return
                entry = owner.script.pop(0)
                if isinstance(entry, int):
                    self._send(entry, {"error": {"message": "slow down", "type": "rate_limit", "code": "rate_limit"}},
                               {"retry-after-ms": "10"})
                    return
                prompt_tokens = sum(len(m.get("content", "").split()) for m in body.get("messages", []))
                completion_tokens = len(entry.split())
                self._send(200, {
                    "id": f"chatcmpl-{len(owner.requests)}", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "scripted"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": entry}}],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                              "total_tokens": prompt_tokens + completion_tokens},
                })

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
