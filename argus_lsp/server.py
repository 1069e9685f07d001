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
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from tree_sitter import Tree

from argus_lsp import config as config_mod
from argus_lsp import settings as settings_mod
from argus_lsp.documents import DocumentStore
from argus_lsp.features import code_actions, hover, profile_lens, record_command, traces
from argus_lsp.features import optimize as optimize_feature
from argus_lsp.features.diagnostics import DiagnosticsScheduler
from argus_lsp.features.launches import WorkspaceLaunches
from argus_lsp.gc_pause import freeze_start_up
from argus_lsp.project_files import WorkspaceSources

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

    # Text synchronisation is Argus's own (documents.py): pygls's built-in handlers would also keep
    # a copy of every document, split into lines by `str.splitlines` (which breaks at \f, \v,
    # \x1c-\x1e, \x85, U+2028 and U+2029, where LSP does not) and clamp each change's positions
    # against those lines *in place*, so the store would then apply an altered range. These three
    # only hand the untouched params to the server's handlers; pygls's workspace holds no documents.
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        yield from self._only_user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        yield from self._only_user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        yield from self._only_user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def _only_user_handler(self, method: str, params: object):
        if (handler := self.fm.features.get(method)) is not None:
            yield handler, (params,), None


class ArgusServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("argus", __version__, protocol_cls=ArgusProtocol)
        self.store = DocumentStore()
        self.diagnostics = DiagnosticsScheduler(self.store, self.publish, self.log_error)
        self.base_settings = settings_mod.Settings()
        self.project_settings = settings_mod.Settings()  # [tool.argus] of the workspace's project
        self.init_options: object | None = None
        self.problems: list[str] = []
        self.profiles = profile_lens.ProfileFeature(self)
        self.diagnostics.launches = WorkspaceLaunches(lambda m: self.warn_user([m]))
        self.recorder = record_command.RecordFeature(self)
        self.workspace_folder: Path | None = None
        self.launch_watch: str | None = None  # the pattern a registered launch-file watcher watches
        # hover interprets one kernel: threads of its own, so it never queues behind a check; two,
        # so that a hover answered "being traced" (its trace still running) does not hold up the
        # next one, which usually only looks a trace up
        self.hover_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="argus-hover")
        self.hover_memo = hover.HoverMemo()
        self.trace_memo = traces.trace_memo()  # kernel traces, by the text they were computed on
        self.diagnostics.on_trace = lambda key, trace: self.trace_memo.put(key, trace)
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

    def launches_maybe_changed(self) -> None:
        """The launch file may have changed (a watcher event, a recording that ended): re-check,
        and ask a pulling client to pull again, since nothing it did made the results stale."""
        if self.diagnostics.launches_maybe_changed() and self.diagnostics.pull:
            if self.supports("workspace.diagnostics.refresh_support"):
                self.workspace_diagnostic_refresh(None)

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
        new, problems = settings_mod.resolve(self.project_settings, self.init_options, raw)
        self.warn_user(problems)
        if new != self.diagnostics.settings:
            if new.launches != self.diagnostics.settings.launches:
                self.diagnostics.launches.configure(self.workspace_folder, new.launches)
                await watch_launch_file(self)
            self.diagnostics.settings = new
            self.diagnostics.recheck_all()
            if self.diagnostics.pull and self.supports("workspace.diagnostics.refresh_support"):
                self.workspace_diagnostic_refresh(None)


def client_trusts(init_options: object) -> bool:
    """Whether the client said the workspace is trusted: `{"argus": {"trusted": true}}` (or
    `{"trusted": true}`) in initializationOptions. Silence means untrusted: profiling and
    optimizing run the workspace's code, so a client that does not speak about trust (a generic
    LSP client, Neovim unless the user opts the workspace in) does not get them."""
    opts = init_options
    if isinstance(opts, dict) and isinstance(opts.get("argus"), dict):
        opts = opts["argus"]
    return isinstance(opts, dict) and opts.get("trusted") is True


server = ArgusServer()


@server.feature(types.INITIALIZE)
def initialize(ls: ArgusServer, params: types.InitializeParams) -> None:
    root = next((f.uri for f in params.workspace_folders or []), None) or params.root_uri
    folder = uris.to_fs_path(root) if root else params.root_path
    ls.project_settings, project_problems = config_mod.project_settings(Path(folder) if folder else None)
    ls.init_options = params.initialization_options
    ls.base_settings, ls.problems = settings_mod.resolve(ls.project_settings, ls.init_options, None)
    ls.problems = project_problems + ls.problems
    ls.diagnostics.settings = ls.base_settings
    ls.diagnostics.encoding = ls.encoding
    ls.diagnostics.pull = ls.supports("text_document.diagnostic")
    ls.profiles.configure(params.initialization_options)
    ls.profiles.trusted = client_trusts(params.initialization_options)
    ls.optimizer.configure(params.initialization_options)
    ls.recorder.trusted = ls.profiles.trusted
    ls.workspace_folder = Path(folder) if folder else None
    ls.diagnostics.launches.configure(ls.workspace_folder, ls.base_settings.launches)
    ls.diagnostics.workspace = WorkspaceSources(ls.workspace_folder) if ls.workspace_folder else None


WATCH_ID = "argus-launch-file"


async def watch_launch_file(ls: ArgusServer) -> None:
    """Ask a client that can watch files to report changes of the launch file (a new recording
    then re-checks the open documents at once); others are covered by the stat before each check.

    Only once there is a file to watch (it exists, or the setting names it): a workspace that
    never records gets no registration it has no use for. A first recording made outside the
    editor is then seen at the next check; one made by `argus.record` registers the watcher."""
    if not ls.supports("workspace.did_change_watched_files.dynamic_registration"):
        return
    launches = ls.diagnostics.launches
    pattern, path = launches.glob(), launches.path()
    if pattern is None or path is None or pattern == ls.launch_watch:
        return
    if not (launches.setting or os.path.exists(path)):
        return
    watcher = types.FileSystemWatcher(glob_pattern=pattern)
    try:
        if ls.launch_watch is not None:
            await ls.client_unregister_capability_async(
                types.UnregistrationParams(
                    unregisterations=[
                        types.Unregistration(id=WATCH_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
                    ]
                )
            )
            ls.launch_watch = None
        await ls.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id=WATCH_ID,
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[watcher]),
                    )
                ]
            )
        )
        ls.launch_watch = pattern
    except Exception as exc:  # the stat before each check still notices a new recording
        log.warning("registering the launch-file watcher failed: %s", exc)


@server.feature(types.INITIALIZED)
async def initialized(ls: ArgusServer, params: types.InitializedParams) -> None:
    ls.warn_user(ls.problems)
    ls.diagnostics.launches_maybe_changed()  # a broken launch file is reported now, not at first check
    await watch_launch_file(ls)
    if ls.supports("workspace.configuration"):
        await ls.refresh_settings()


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: ArgusServer, params: types.DidChangeWatchedFilesParams) -> None:
    ls.launches_maybe_changed()


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
    ls.hover_memo.drop(params.text_document.uri)
    if len(ls.store) == 0:
        ls.trace_memo = traces.trace_memo()  # nothing open: give the traces back with the rest
    ls.diagnostics.closed(params.text_document.uri)


DOCUMENT_TEXT = "argus/documentText"


@server.feature(DOCUMENT_TEXT)
def document_text(ls: ArgusServer, params: object) -> dict | None:
    """The text of an open document as the server holds it (`{"textDocument": {"uri": ...}}`):
    for telling a drift between editor and server apart from a checker bug, as rust-analyzer's
    "view file text" does. Answers null for a document that is not open."""
    ident = getattr(params, "text_document", None) or getattr(params, "textDocument", None)
    uri = getattr(ident, "uri", None)
    doc = ls.store.get(uri) if isinstance(uri, str) else None
    if doc is None:
        return None
    return {"uri": doc.uri, "version": doc.version, "text": doc.text()}


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
    key = ls.hover_memo.key(doc.uri, doc.revision, doc.source, offset)
    if key is not None and (known := ls.hover_memo.get(key))[0]:
        return known[1]
    loop = asyncio.get_running_loop()
    tree = doc.parse()  # incremental, and a copy of its own for the hover thread
    source, own = doc.source, tree.copy()  # this text and its tree, for an answer given meanwhile
    running = loop.run_in_executor(ls.hover_executor, _hover_pausing_checks, ls, source, offset, tree)
    try:
        found = await asyncio.wait_for(asyncio.shield(running), ls.diagnostics.settings.hover_wait_ms / 1000)
    except TimeoutError:
        # the kernel has no trace yet and tracing it takes longer than a hover may wait: say so
        # now; the trace goes on, and its answer is kept for the next hover on this name
        running.add_done_callback(lambda done: _keep_late_hover(ls, key, done))
        return hover.being_traced(source, offset, own)
    except Exception as exc:  # the interpreter failing on one name must not break hover for the file
        log.warning("describe_at failed: %s", exc)
        return None
    if key is not None:
        ls.hover_memo.put(key, found)
    return found


def _keep_late_hover(ls: ArgusServer, key: tuple[str, int, int, int] | None, done: asyncio.Future) -> None:
    """A hover's answer that came after the hover was answered "being traced": kept for the next."""
    if done.cancelled():
        return
    if done.exception() is not None:
        log.warning("describe_at failed: %s", done.exception())
    elif key is not None:
        ls.hover_memo.put(key, done.result())


def _hover_pausing_checks(ls: ArgusServer, source: bytes, offset: int, tree: Tree) -> types.Hover | None:
    """On the hover thread. Checks on the server's own threads (`checkProcesses: 0`) pause at
    their next stopping point until this is done; those in worker processes need not."""
    if ls.diagnostics.settings.check_processes > 0:
        return hover.variable_hover(source, offset, tree, ls.trace_memo)
    with ls.diagnostics.gate.busy():
        return hover.variable_hover(source, offset, tree, ls.trace_memo)


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


@server.command(record_command.COMMAND)
async def record_launches_command(ls: ArgusServer, *args: object) -> dict:
    try:
        return await ls.recorder.execute(list(args))
    finally:
        await watch_launch_file(ls)  # the recording may have written the first launch file


@server.command(record_command.CANCEL_COMMAND)
def record_cancel_command(ls: ArgusServer, *args: object) -> bool:
    return ls.recorder.cancel()


@server.feature(types.SHUTDOWN)
def on_shutdown(ls: ArgusServer, params: None) -> None:
    ls.recorder.shutdown()
    ls.profiles.shutdown()
    ls.optimizer.shutdown()
    ls.diagnostics.shutdown()
    ls.hover_executor.shutdown(wait=False, cancel_futures=True)


def run_server(tcp: str | None = None) -> int:
    """Serve over stdio, or over TCP when `tcp` is "HOST:PORT". Returns the exit status."""
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="argus-lsp %(levelname)s %(message)s"
    )
    freeze_start_up()  # full collections would rescan every imported module: gc_pause.py
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
