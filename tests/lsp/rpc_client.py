"""A small synchronous LSP client over a real server process (stdio), for tests that need the exact
argv and working directory of an editor's launch path, or many edits in one hypothesis run, and
for the latency benchmarks (benchmarks/lsp_*.py), which want no client library in the measured path.

pytest-lsp drives the feature tests; this one exists because those needs are awkward there:
hypothesis examples are synchronous, and the launch-path tests start the server the way a
particular editor does (its argv, its cwd, its environment), not as `python -m argus_lsp.server`.
Every message is timestamped as it arrives (`wait_timed`), and `send` returns when it was
written; the server can be pinned to one CPU and its CPU time and resident memory read from /proc.
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


class RpcClient:
    def __init__(
        self,
        argv: list[str],
        cwd: Path | str,
        env: dict[str, str] | None = None,
        cpu: int | None = None,
    ) -> None:
        pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=pin,
        )
        self._cond = threading.Condition()
        self._write = threading.Lock()  # the reader thread answers server requests too
        self._inbox: list[tuple[float, Message]] = []  # (arrival, message), oldest first
        self._next_id = 0
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

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
                with self._cond:
                    self._cond.notify_all()
                return
            msg = json.loads(out.read(length))
            now = time.perf_counter()
            if "method" in msg and "id" in msg:
                self._answer(msg)
                continue
            with self._cond:
                self._inbox.append((now, msg))
                self._cond.notify_all()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read(4096), b""):  # type: ignore[union-attr]
            self.stderr += chunk

    def _answer(self, msg: Message) -> None:
        """Server -> client requests: no configuration, and every other request acknowledged."""
        if msg["method"] == "workspace/configuration":
            result: Any = [None] * len(msg.get("params", {}).get("items", []))
        else:
            result = None
        self._send({"id": msg["id"], "result": result})

    def _send(self, msg: Message) -> float:
        """Write one message; returns when it was written (perf_counter)."""
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        assert self.proc.stdin is not None
        with self._write:
            sent = time.perf_counter()
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            self.proc.stdin.flush()
        return sent

    def inbox(self) -> list[Message]:
        """The messages received and not yet taken by a `wait`, oldest first."""
        with self._cond:
            return [m for _, m in self._inbox]

    def wait(self, pred: Callable[[Message], bool], timeout: float = 60) -> Message:
        return self.wait_timed(pred, timeout)[1]

    def wait_timed(self, pred: Callable[[Message], bool], timeout: float = 60) -> tuple[float, Message]:
        """The oldest message matching `pred` and when it arrived (perf_counter), taken out."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for i, (t, m) in enumerate(self._inbox):
                    if pred(m):
                        del self._inbox[i]
                        return t, m
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    err = self.stderr.decode(errors="replace")[-3000:]
                    raise TimeoutError(f"no matching message (server rc={self.proc.poll()}):\n{err}")
                self._cond.wait(min(left, 0.5))

    # -- LSP ------------------------------------------------------------------------------------
    def request_async(self, method: str, params: Any) -> tuple[int, float]:
        """Send a request without waiting: (its id, when it was written)."""
        self._next_id += 1
        return self._next_id, self._send({"id": self._next_id, "method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        rid, _ = self.request_async(method, params)
        reply = self.wait(lambda m: m.get("id") == rid, timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result")

    def notify(self, method: str, params: Any) -> float:
        return self._send({"method": method, "params": params})

    def initialize(
        self, root: Path, encodings: list[str] | None = None, options: dict | None = None
    ) -> dict:
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {
                    "general": {"positionEncodings": encodings or ["utf-16"]},
                    "textDocument": {"publishDiagnostics": {"versionSupport": True}},
                },
                "initializationOptions": options or {"argus": {"debounceMs": 0}},
            },
        )
        self.notify("initialized", {})
        return result

    def open(self, uri: str, text: str, version: int = 1) -> float:
        return self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
        )

    def change(self, uri: str, version: int, changes: list[dict]) -> float:
        return self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes},
        )

    def close_doc(self, uri: str) -> float:
        return self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def published_timed(self, uri: str, version: int | None, timeout: float = 60) -> tuple[float, Message]:
        """The next publishDiagnostics for `uri` (carrying `version`, unless None) and its arrival."""

        def pred(m: Message) -> bool:
            p = m.get("params") or {}
            return (
                m.get("method") == "textDocument/publishDiagnostics"
                and p.get("uri") == uri
                and (version is None or p.get("version") == version)
            )

        return self.wait_timed(pred, timeout)

    def published(self, uri: str, version: int | None, timeout: float = 60) -> list[dict]:
        return self.published_timed(uri, version, timeout)[1]["params"]["diagnostics"]

    def text_of(self, uri: str) -> str | None:
        reply = self.request("argus/documentText", {"textDocument": {"uri": uri}})
        return None if reply is None else reply["text"]

    def descendants(self) -> list[int]:
        """Pids of the server's child processes and theirs (its check workers), from /proc."""
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                continue
            parents[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
        found, frontier = [], [self.proc.pid]
        while frontier:
            kids = [pid for pid, ppid in parents.items() if ppid in frontier]
            found += kids
            frontier = kids
        return found

    def cpu_ns(self) -> int:
        """CPU time of every thread of the server and of its child processes (its check workers)
        so far (Linux schedstat: nanoseconds); a child that has ended is no longer counted."""
        total = 0
        for pid in [self.proc.pid, *self.descendants()]:
            try:
                tasks = list(Path(f"/proc/{pid}/task").iterdir())
            except (FileNotFoundError, ProcessLookupError):
                continue
            for task in tasks:
                try:
                    total += int((task / "schedstat").read_text().split()[0])
                except (FileNotFoundError, ProcessLookupError):
                    continue  # a thread that just ended
        return total

    def rss_kib(self, pid: int | None = None) -> int:
        """Resident set size of the server process, or of `pid` (Linux /proc)."""
        for line in Path(f"/proc/{pid or self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def children_rss_kib(self) -> int:
        total = 0
        for pid in self.descendants():
            try:
                total += self.rss_kib(pid)
            except (FileNotFoundError, ProcessLookupError, RuntimeError):
                continue
        return total

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(10)
        except Exception:
            self.proc.kill()
            self.proc.wait(10)
