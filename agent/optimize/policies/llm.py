"""The `llm` policy: any OpenAI-compatible chat-completions endpoint through the `openai` package.

Settings come from flags or the environment (argus_lsp/cli_optimize.py); a missing base URL, model or
key, or an endpoint that does not answer, fails at once (`preflight`) with a message, before any GPU
time. Rate limits and server errors are retried with exponential backoff by the client (max_retries);
every call has a timeout, so nothing hangs. The reply's code is untrusted: it is only parsed here (splice)
and runs in the gate worker's subprocess. The key is read from its variable and never stored or logged.
"""

from __future__ import annotations

import os

from argus.agent.optimize.history import History
from argus.agent.optimize.policies.base import PolicyContext
from argus.agent.optimize.policies.prompt import render
from argus.agent.optimize.splice import SpliceError, extract_code, splice
from argus.agent.optimize.types import Candidate, LLMSettings, OptimizeError


class LLMPolicy:
    name = "llm"

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self.client = None
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.last_prompt: list[dict[str, str]] = []
        self.failures: list[str] = []

    def preflight(self) -> None:
        """Fail loudly now on a missing setting or an endpoint that cannot be reached."""
        s = self.settings
        if not s.base_url:
            raise OptimizeError("llm policy: no endpoint: pass --base-url URL (or set ARGUS_LLM_BASE_URL)")
        if not s.model:
            raise OptimizeError("llm policy: no model: pass --model NAME (or set ARGUS_LLM_MODEL)")
        key = os.environ.get(s.api_key_env)
        if not key:
            raise OptimizeError(f"llm policy: ${s.api_key_env} is not set (local servers accept any value, e.g. "
                                f"{s.api_key_env}=none); choose the variable with --api-key-env")
        try:
            import openai
        except ImportError:
            raise OptimizeError("llm policy: the `openai` package is missing: pip install 'argus-lsp[agent]'") from None
        self.client = openai.OpenAI(base_url=s.base_url, api_key=key, timeout=s.timeout_s, max_retries=s.max_retries)
        try:
            openai.OpenAI(base_url=s.base_url, api_key=key, timeout=10.0, max_retries=0).models.list()
        except openai.APIConnectionError as exc:
            raise OptimizeError(f"llm policy: cannot reach {s.base_url}: {exc}") from None
        except openai.AuthenticationError:
            raise OptimizeError(f"llm policy: {s.base_url} rejected the key in ${s.api_key_env}") from None
        except openai.APIStatusError:
            pass  # some servers have no /models; the first completion will tell

    def usage(self) -> dict:
        s = self.settings
        tokens = self.prompt_tokens + self.completion_tokens
        cost = round(tokens / 1e6 * s.price_per_mtok, 6) if s.price_per_mtok is not None else "unknown (no price set)"
        return {"base_url": s.base_url, "model": s.model, "api_key_env": s.api_key_env, "calls": self.calls,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost_usd": cost, "unusable_replies": self.failures}

    def _ask(self, messages: list[dict[str, str]]) -> str:
        import openai

        if self.client is None:
            self.preflight()
        try:
            reply = self.client.chat.completions.create(model=self.settings.model, messages=messages, temperature=0.2)
        except openai.APIConnectionError as exc:
            raise OptimizeError(f"llm policy: lost the endpoint {self.settings.base_url}: {exc}") from None
        except openai.APIStatusError as exc:
            raise OptimizeError(f"llm policy: the endpoint answered {exc.status_code}: {str(exc)[:300]}") from None
        self.calls += 1
        if reply.usage is not None:
            self.prompt_tokens += reply.usage.prompt_tokens or 0
            self.completion_tokens += reply.usage.completion_tokens or 0
        return reply.choices[0].message.content or ""

    def propose(self, ctx: PolicyContext, history: History, n: int) -> list[Candidate]:
        out = []
        for _ in range(n):
            messages = render(ctx, history)
            self.last_prompt = messages
            text = self._ask(messages)
            try:
                source = splice(ctx.source, extract_code(text))
            except SpliceError as exc:
                self.failures.append(str(exc))
                source = None
            idx = len(history.attempts) + len(out) + 1
            if source is None:
                # An unusable reply still counts against the budget and goes into the history as a gate-1 failure.
                source = f"# unusable reply: {self.failures[-1]}\n"
            out.append(Candidate(id=f"m{idx:02d}", source=source, origin="llm", description=f"reply {self.calls}"))
        return out
