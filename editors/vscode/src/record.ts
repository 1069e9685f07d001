// "Argus: Record launches": asks for the command line (default `pytest`) and runs the server's
// `argus.record`, which runs `argus record -- CMD` in the workspace with a timeout and cancellable
// progress, then re-checks the open files against the new recording. It runs the workspace's
// code, so it is offered only in a trusted workspace (package.json's enablement and `when`), the
// client's middleware withholds the server command otherwise, and the server refuses it too.
import * as vscode from 'vscode';
import {
    DEFAULT_RECORD_COMMAND,
    RECORD_SERVER_COMMAND,
    RECORD_UI_COMMAND,
    describeOutcome,
    recordArguments,
    validateCommandLine,
} from './recordCommand';

const LAST_KEY = 'argus.record.lastCommand';
const START_WAIT_MS = 30_000;

/** `ready` starts the server if needed and answers whether it is running. */
export function registerRecordCommand(
    context: vscode.ExtensionContext,
    ready: () => Promise<boolean>,
): vscode.Disposable {
    return vscode.commands.registerCommand(RECORD_UI_COMMAND, async () => {
        if (!vscode.workspace.isTrusted) {
            void vscode.window.showWarningMessage('Argus: recording runs the workspace\'s code; trust the workspace first.');
            return;
        }
        const line = await vscode.window.showInputBox({
            title: 'Argus: Record launches',
            prompt: 'Command to run once while Argus records every Triton launch (e.g. your tests)',
            value: context.workspaceState.get<string>(LAST_KEY) ?? DEFAULT_RECORD_COMMAND,
            validateInput: validateCommandLine,
        });
        if (line === undefined) return;
        await context.workspaceState.update(LAST_KEY, line);
        if (!(await ready())) {
            void vscode.window.showErrorMessage('Argus: the server is not running (see "Argus: Show output").');
            return;
        }
        const result = await vscode.commands.executeCommand(RECORD_SERVER_COMMAND, recordArguments(line));
        const note = describeOutcome(result);
        if (note) void vscode.window.showInformationMessage(note);
    });
}

/** Poll until `running()` or the wait is over (the server advertises its commands once started). */
export async function waitForServer(running: () => boolean): Promise<boolean> {
    const until = Date.now() + START_WAIT_MS;
    while (!running() && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    return running();
}
