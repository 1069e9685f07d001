// "Optimize this kernel" (argus_lsp/features/optimize.py): the server runs the agent and answers
// with a unified diff and the candidate's full text; this module shows them as a diff editor (the
// file against a read-only virtual document holding the candidate) and asks the user. Only an
// "Apply" sends `argus.optimize.apply`, and the server then edits the file through
// workspace/applyEdit, refusing if the document changed since the run started or if the
// candidate did not pass every gate. Nothing is written to disk: the user saves as usual.
import * as vscode from 'vscode';

export const OPTIMIZE_COMMAND = 'argus.optimize';
export const APPLY_COMMAND = 'argus.optimize.apply';
/** The palette command: optimize the kernel under the cursor (found through the server's code action). */
export const OPTIMIZE_AT_CURSOR = 'argus.optimizeKernel';
export const SCHEME = 'argus-optimized';

/** What `argus.optimize` returns (outcome_json in the server). */
export interface OptimizeOutcome {
    status: 'improved' | 'no-better' | 'unmeasured' | 'cancelled' | 'running' | 'error';
    kernel: string;
    applicable?: boolean;
    reason?: string;
    message?: string;
    patch?: string;
    newText?: string | null;
    best?: { speedup?: number | null; description?: string; id?: string } | null;
    candidates?: number;
    notes?: string[];
}

type Next = (command: string, args: unknown[]) => vscode.ProviderResult<unknown>;

/** Candidate texts by virtual URI, served read-only to the diff editor. */
class CandidateDocuments implements vscode.TextDocumentContentProvider {
    private readonly texts = new Map<string, string>();
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    readonly onDidChange = this.changed.event;

    set(uri: vscode.Uri, text: string): void {
        this.texts.set(uri.toString(), text);
        this.changed.fire(uri);
    }

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.texts.get(uri.toString()) ?? '';
    }
}

const documents = new CandidateDocuments();

export function registerOptimize(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
        vscode.workspace.registerTextDocumentContentProvider(SCHEME, documents),
        vscode.commands.registerCommand(OPTIMIZE_AT_CURSOR, optimizeAtCursor),
    );
}

/** The one-line summary shown above the Apply / Discard buttons. */
export function summary(o: OptimizeOutcome): string {
    const speed = typeof o.best?.speedup === 'number' ? `${o.best.speedup.toFixed(2)}x faster, ` : '';
    const what = o.best?.description ? ` (${o.best.description})` : '';
    const n = `${o.candidates ?? 0} candidate${o.candidates === 1 ? '' : 's'} tried`;
    // A test server fakes gate 3's clock; the agent says so in its notes, and so does the prompt.
    const faked = o.notes?.some((note) => note.includes('injected timer')) ? ' (speedup from a test timer, not measured)' : '';
    return `Argus: a better ${o.kernel}${what}: ${speed}passed every gate${faked}; ${n}. Apply it to the file?`;
}

/**
 * The executeCommand middleware's branch for `argus.optimize`: run it on the server, then preview
 * and, on the user's say-so, apply. Returns the server's outcome (for whoever called the command).
 */
export async function optimizeThenPreview(args: unknown[], next: Next): Promise<unknown> {
    const outcome = (await next(OPTIMIZE_COMMAND, args)) as OptimizeOutcome | undefined;
    const target = (args[0] ?? {}) as { uri?: string; kernel?: string };
    if (!outcome || !target.uri) return outcome;
    if (outcome.status === 'cancelled' || outcome.status === 'running' || outcome.status === 'error') {
        if (outcome.status === 'cancelled') void vscode.window.showInformationMessage(`Argus: optimizing ${outcome.kernel} was cancelled.`);
        return outcome; // an error was already shown by the server (window/showMessage)
    }
    if (!outcome.newText) {
        void vscode.window.showInformationMessage(`Argus: no better ${outcome.kernel} found: ${outcome.reason || outcome.status}.`);
        return outcome;
    }
    const original = vscode.Uri.parse(target.uri);
    const candidate = vscode.Uri.from({ scheme: SCHEME, path: original.path, query: `kernel=${outcome.kernel}` });
    documents.set(candidate, outcome.newText);
    await vscode.commands.executeCommand('vscode.diff', original, candidate, `${outcome.kernel}: your file ↔ Argus candidate`, {
        preview: true,
    });
    if (!outcome.applicable) {
        void vscode.window.showWarningMessage(`Argus: ${outcome.kernel}: ${outcome.reason || outcome.status}; shown for review only.`);
        return outcome;
    }
    const pick = await vscode.window.showInformationMessage(summary(outcome), 'Apply', 'Discard');
    if (pick !== 'Apply') return outcome;
    try {
        const applied = (await next(APPLY_COMMAND, [{ uri: target.uri, kernel: outcome.kernel }])) as { status?: string; message?: string };
        if (applied?.status !== 'applied') {
            void vscode.window.showWarningMessage(`Argus: the edit was not applied: ${applied?.message ?? 'unknown reason'}`);
        }
    } catch (e) {
        // The server refused: the document changed since the run, or the result is gone.
        void vscode.window.showWarningMessage(`Argus: ${e instanceof Error ? e.message : String(e)}`);
    }
    return outcome;
}

/** Ask the server's code actions at the cursor for the optimize action, and run it. */
async function optimizeAtCursor(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
        void vscode.window.showInformationMessage('Argus: open a kernel file and put the cursor in a kernel.');
        return;
    }
    const actions =
        (await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[]>(
            'vscode.executeCodeActionProvider',
            editor.document.uri,
            new vscode.Range(editor.selection.active, editor.selection.active),
            vscode.CodeActionKind.RefactorRewrite.value,
        )) ?? [];
    const action = actions.find((a) => 'command' in a && typeof a.command === 'object' && a.command?.command === OPTIMIZE_COMMAND) as
        | vscode.CodeAction
        | undefined;
    if (!action?.command) {
        void vscode.window.showInformationMessage('Argus: no kernel with a task here (see docs/optimize.md for tasks).');
        return;
    }
    await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
}
