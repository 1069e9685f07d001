"""A raw JSON-RPC LSP client for the latency benchmarks: no client library in the measured path.

`LspProcess` starts a server over stdio (optionally pinned to one CPU), timestamps every message
as it arrives, answers the server's own requests, and reads the server's CPU time and resident
memory from /proc (CPU time summed over all its threads, in nanoseconds, from schedstat).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Message = dict[str, Any]


class LspProcess:
    def __init__(
        self, argv: list[str], cwd: Path, env: dict[str, str] | None = None, cpu: int | None = None
    ) -> None:
        preexec = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            preexec_fn=preexec,
        )
        self.cond = threading.Condition()
        self.write_lock = threading.Lock()
        self.messages: list[tuple[float, Message]] = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    # -- transport ----------------------------------------------------------------------------
    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                with self.cond:
                    self.cond.notify_all()
                return
            msg = json.loads(out.read(length))
            now = time.perf_counter()
            if "method" in msg and "id" in msg:
                self._answer(msg)
                continue
            with self.cond:
                self.messages.append((now, msg))
                self.cond.notify_all()

    def _answer(self, m: Message) -> None:
        """Server -> client requests (configuration, progress, refresh): answered at once."""
        items = (m.get("params") or {}).get("items", [])
        result = [None] * len(items) if m["method"] == "workspace/configuration" else None
        self.send({"id": m["id"], "result": result})

    def send(self, msg: Message) -> float:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        assert self.proc.stdin is not None
        with self.write_lock:
            t = time.perf_counter()
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            self.proc.stdin.flush()
        return t

    def wait(self, pred: Callable[[Message], bool], timeout: float = 300) -> tuple[float, Message]:
        deadline = time.perf_counter() + timeout
        with self.cond:
            while True:
                for i, (t, m) in enumerate(self.messages):
                    if pred(m):
                        del self.messages[i]
                        return t, m
                left = deadline - time.perf_counter()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no matching message (server rc={self.proc.poll()})")
                self.cond.wait(min(left, 0.5))

    def drop_older(self) -> None:
        with self.cond:
            self.messages.clear()

    # -- LSP ------------------------------------------------------------------------------------
    def request_async(self, method: str, params: Any) -> tuple[int, float]:
        self.next_id += 1
        return self.next_id, self.send({"id": self.next_id, "method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 300) -> Any:
        rid, _ = self.request_async(method, params)
        return self.wait(lambda m: m.get("id") == rid, timeout)[1].get("result")

    def notify(self, method: str, params: Any) -> float:
        return self.send({"method": method, "params": params})

    def initialize(self, root: Path, options: dict | None = None) -> None:
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "textDocument": {"publishDiagnostics": {"versionSupport": True}},
                },
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})

    def open(self, uri: str, text: str, version: int = 1) -> float:
        item = {"uri": uri, "languageId": "python", "version": version, "text": text}
        return self.notify("textDocument/didOpen", {"textDocument": item})

    def change(self, uri: str, version: int, rng: dict, text: str) -> float:
        return self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": rng, "text": text}],
            },
        )

    def close_doc(self, uri: str) -> float:
        return self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def wait_published(self, uri: str, version: int | None, timeout: float = 300) -> tuple[float, Message]:
        def pred(m: Message) -> bool:
            p = m.get("params") or {}
            return (
                m.get("method") == "textDocument/publishDiagnostics"
                and p.get("uri") == uri
                and (version is None or p.get("version") == version)
            )

        return self.wait(pred, timeout)

    # -- measurements ---------------------------------------------------------------------------
    def cpu_ns(self) -> int:
        """CPU time of every thread of the server so far (schedstat: nanoseconds)."""
        total = 0
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                continue  # a thread that just ended
        return total

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=20)
            self.notify("exit", None)
            self.proc.wait(10)
        except Exception:
            self.proc.kill()
            self.proc.wait(10)
