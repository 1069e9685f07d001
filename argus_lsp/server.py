"""The Argus language server: handler registration and translation only.

Documents (bytes + incremental tree-sitter tree) live in `documents.py`, scheduling and
push/pull diagnostics in `features/diagnostics.py`, positions in `convert.py`. The server never
runs workspace code: the checker only parses and interprets kernels abstractly.

Start it with `argus serve` (stdio, or `--tcp HOST:PORT`), `argus-lsp`, or
`python -m argus_lsp.server [--tcp HOST:PORT]`.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from importlib.metadata import PackageNotFoundError, version

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from argus_lsp import settings as settings_mod
from argus_lsp.documents import DocumentStore
from argus_lsp.features import code_actions, hover, profile_lens
from argus_lsp.features import optimize as optimize_feature
from argus_lsp.features.diagnostics import DiagnosticsScheduler

try:
    __version__ = version("argus-lsp")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

log = logging.getLogger(__name__)


class ArgusProtocol(LanguageServerProtocol):
    """pygls picks the client's first listed encoding; Argus prefers UTF-8 whenever it is offered,
    because the analyzers count in UTF-8 bytes and no conversion is then needed."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            offered = list(general.position_encodings)
            if types.PositionEncodingKind.Utf8 in offered:
                offered.remove(types.PositionEncodingKind.Utf8)
                general.position_encodings = [types.PositionEncodingKind.Utf8, *offered]
        return (yield from super().lsp_initialize(params))


class ArgusServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("argus", __version__, protocol_cls=ArgusProtocol)
        self.store = DocumentStore()
        self.diagnostics = DiagnosticsScheduler(self.store, self.publish, self.log_error)
        self.base_settings = settings_mod.Settings()
        self.problems: list[str] = []
        self.profiles = profile_lens.ProfileFeature(self)
        self.optimizer = optimize_feature.OptimizeFeature(self)

    @property
    def encoding(self) -> str:
        enc = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return enc.value if isinstance(enc, types.PositionEncodingKind) else str(enc)

    def publish(self, uri: str, version: int | None, diagnostics: list[types.Diagnostic]) -> None:
        if version is not None:  # a closed document (version None) drops everything, profiles too
            diagnostics = diagnostics + self.profiles.diagnostics(uri)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def log_error(self, message: str) -> None:
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=message))

    def warn_user(self, problems: list[str]) -> None:
        for p in problems:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=p))

    def supports(self, path: str) -> bool:
        """Whether the client capability at dotted `path` is present and truthy."""
        node = self.client_capabilities
        for part in path.split("."):
            node = getattr(node, part, None)
            if node is None:
                return False
        return bool(node)

    async def refresh_settings(self, pushed: object | None = None) -> None:
        """Settings = initializationOptions, then whatever the client says now (pulled or pushed)."""
        raw = pushed
        if self.supports("workspace.configuration"):
            try:
                items = await self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="argus")])
                )
                raw = items[0] if items else None
            except Exception as exc:  # a client that cannot answer keeps the settings it had
                log.warning("workspace/configuration failed: %s", exc)
        new, problems = settings_mod.merge(self.base_settings, raw)
        self.warn_user(problems)
        if new != self.diagnostics.settings:
            self.diagnostics.settings = new
            self.diagnostics.recheck_all()
            if self.diagnostics.pull and self.supports("workspace.diagnostics.refresh_support"):
                self.workspace_diagnostic_refresh(None)


server = ArgusServer()


@server.feature(types.INITIALIZE)
def initialize(ls: ArgusServer, params: types.InitializeParams) -> None:
    ls.base_settings, ls.problems = settings_mod.merge(settings_mod.Settings(), params.initialization_options)
    ls.diagnostics.settings = ls.base_settings
    ls.diagnostics.encoding = ls.encoding
    ls.diagnostics.pull = ls.supports("text_document.diagnostic")
    ls.profiles.configure(params.initialization_options)
    ls.optimizer.configure(params.initialization_options)


@server.feature(types.INITIALIZED)
async def initialized(ls: ArgusServer, params: types.InitializedParams) -> None:
    ls.warn_user(ls.problems)
    if ls.supports("workspace.configuration"):
        await ls.refresh_settings()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: ArgusServer, params: types.DidChangeConfigurationParams) -> None:
    await ls.refresh_settings(pushed=params.settings)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ArgusServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.store.open(params.text_document)
    ls.diagnostics.opened(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ArgusServer, params: types.DidChangeTextDocumentParams) -> None:
    if ls.store.change(params, ls.encoding) is not None:
        ls.diagnostics.changed(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: ArgusServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.diagnostics.saved(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: ArgusServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.store.close(params.text_document.uri)
    ls.diagnostics.closed(params.text_document.uri)


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(identifier="argus", inter_file_dependencies=False, workspace_diagnostics=False),
)
async def diagnostic(
    ls: ArgusServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    uri = params.text_document.uri
    result = await ls.diagnostics.current(uri)
    if result is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    result_id = result.result_id + ls.profiles.result_tag(uri)
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    items = result.diagnostics + ls.profiles.diagnostics(uri)
    return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite],
        resolve_provider=False,
    ),
)
def code_action(ls: ArgusServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    doc = ls.store.get(params.text_document.uri)
    if doc is None:
        return None
    versioned = ls.supports("workspace.workspace_edit.document_changes")
    found = code_actions.code_actions(doc, params, ls.encoding, versioned) + ls.optimizer.code_actions(params)
    return found or None


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def on_hover(ls: ArgusServer, params: types.HoverParams) -> types.Hover | None:
    doc = ls.store.get(params.text_document.uri)
    if doc is None:
        return None
    index = doc.index()
    offset = index.offset(params.position, ls.encoding)
    found = hover.code_hover(index, offset, ls.encoding) or ls.profiles.hover(doc, offset, ls.encoding)
    if found is not None:
        return found
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(ls.diagnostics.executor, hover.variable_hover, doc.source, offset)
    except Exception as exc:  # the interpreter failing on one name must not break hover for the file
        log.warning("describe_at failed: %s", exc)
        return None


@server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
def code_lens(ls: ArgusServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
    uri = params.text_document.uri  # shown as "✨ Optimize | ▶ Profile"
    return ls.optimizer.code_lenses(uri) + ls.profiles.code_lenses(uri) or None


@server.command(profile_lens.COMMAND)
async def profile_command(ls: ArgusServer, *args: object) -> dict:
    return await ls.profiles.execute(list(args))


@server.command(profile_lens.CANCEL_COMMAND)
def profile_cancel_command(ls: ArgusServer, *args: object) -> bool:
    return ls.profiles.cancel(list(args))


@server.command(optimize_feature.COMMAND)
async def optimize_command(ls: ArgusServer, *args: object) -> dict:
    return await ls.optimizer.execute(list(args))


@server.command(optimize_feature.APPLY_COMMAND)
async def optimize_apply_command(ls: ArgusServer, *args: object) -> dict:
    return await ls.optimizer.apply(list(args))


@server.command(optimize_feature.CANCEL_COMMAND)
def optimize_cancel_command(ls: ArgusServer, *args: object) -> bool:
    return ls.optimizer.cancel(list(args))


@server.feature(types.SHUTDOWN)
def on_shutdown(ls: ArgusServer, params: None) -> None:
    ls.profiles.shutdown()
    ls.optimizer.shutdown()
    ls.diagnostics.shutdown()


def run_server(tcp: str | None = None) -> int:
    """Serve over stdio, or over TCP when `tcp` is "HOST:PORT". Returns the exit status."""
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="argus-lsp %(levelname)s %(message)s"
    )
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            print(f"argus serve: --tcp wants HOST:PORT, got {tcp!r}", file=sys.stderr)
            return 2
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    tcp = args[args.index("--tcp") + 1] if "--tcp" in args and args.index("--tcp") + 1 < len(args) else None
    return run_server(tcp)


if __name__ == "__main__":
    sys.exit(main())
