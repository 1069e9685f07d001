// Entry point. Activation happens for any Python file (package.json), but the server starts only
// once a Python file with a Triton kernel is open, or when a command asks for it.
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { ArgusClient } from './client';
import { registerOptimize } from './optimize';
import { onInterpreterChange } from './pythonExtension';
import { registerRecordCommand, waitForServer } from './record';
import { openRuleDocumentation } from './ruleDocs';
import { LIVE_KEYS, RESTART_KEYS } from './settings';
import { StatusItem } from './status';
import { containsTritonKernel } from './triton';

let argus: ArgusClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const output = vscode.window.createOutputChannel('Argus', { log: true });
    const status = new StatusItem();
    const client = new ArgusClient(output, status, () => safeDirectory(context));
    argus = client;
    context.subscriptions.push(output, status);
    registerOptimize(context);

    let started = false;
    const ensureStarted = () => {
        if (started) return;
        started = true;
        void client.start();
    };
    const consider = (doc: vscode.TextDocument) => {
        if (!started && doc.languageId === 'python' && containsTritonKernel(doc.getText())) ensureStarted();
    };

    context.subscriptions.push(
        vscode.commands.registerCommand('argus.restartServer', async () => {
            started = true;
            await client.restart(true);
        }),
        vscode.commands.registerCommand('argus.showOutput', () => output.show(true)),
        vscode.commands.registerCommand('argus.openRuleDocumentation', (code?: unknown) => openRuleDocumentation(code)),
        registerRecordCommand(context, () => {
            ensureStarted();
            return waitForServer(() => client.running);
        }),
        vscode.workspace.onDidOpenTextDocument(consider),
        // A new file becomes a kernel file when the user writes the decorator; check on save only
        // (cheap), not on every keystroke.
        vscode.workspace.onDidSaveTextDocument(consider),
        vscode.workspace.onDidChangeConfiguration((e) => {
            if (!started) return;
            if (RESTART_KEYS.some((k) => e.affectsConfiguration(k))) void client.restart();
            else if (LIVE_KEYS.some((k) => e.affectsConfiguration(k))) void client.settingsChanged();
        }),
        // Trust granted: restart, so the new server is told `trusted: true` in its
        // initializationOptions (the only place it reads trust from: Profile lenses appear), the
        // Python extension's interpreter may be used, and restricted mode ends. (Trust cannot be
        // revoked without a window reload.)
        vscode.workspace.onDidGrantWorkspaceTrust(() => {
            if (started) void client.restart();
        }),
        { dispose: () => void client.dispose() },
    );

    const sub = await onInterpreterChange(() => {
        if (started && client.source === 'python-extension') void client.restart();
    });
    if (sub) context.subscriptions.push(sub);

    for (const doc of vscode.workspace.textDocuments) consider(doc);
}

/**
 * Where the server process runs: the extension's global storage (created on first use), else its
 * install folder. Both belong to the user's VS Code, not to the workspace that is open.
 */
async function safeDirectory(context: vscode.ExtensionContext): Promise<string> {
    const dir = context.globalStorageUri.fsPath;
    try {
        await fs.mkdir(dir, { recursive: true });
        return dir;
    } catch {
        return context.extensionPath;
    }
}

export async function deactivate(): Promise<void> {
    await argus?.stop();
}
