// Owns the language client: resolves the server command, starts and restarts it, forwards
// settings, and keeps restricted (untrusted) mode to diagnostics only.
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
    CloseAction,
    DidChangeConfigurationNotification,
    ErrorAction,
    LanguageClient,
    type LanguageClientOptions,
    type ServerOptions,
    State,
    TransportKind,
} from 'vscode-languageclient/node';
import { hasArgusPackage, isExecutable, which } from './probes';
import { pythonExtensionInterpreter } from './pythonExtension';
import { RestartPolicy } from './restartPolicy';
import { type ServerCommand, expandHome, launchSpec, resolveServerCommand } from './serverCommand';
import { OPTIMIZE_COMMAND, optimizeThenPreview } from './optimize';
import { initializationOptions, toServerSettings } from './settings';
import type { StatusItem } from './status';

export class ArgusClient implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private server: ServerCommand | undefined;
    private readonly policy = new RestartPolicy();
    // One notification per failure episode; the restart command re-arms it.
    private notified = false;
    private busy: Promise<void> = Promise.resolve();

    /**
     * `safeDir` answers a directory the workspace does not control (extension.ts: the global
     * storage folder, else the extension's install folder). The server and the interpreter probe
     * run there, never in the workspace folder.
     */
    constructor(
        private readonly output: vscode.LogOutputChannel,
        private readonly status: StatusItem,
        private readonly safeDir: () => Promise<string>,
    ) {}

    get running(): boolean {
        return this.client?.state === State.Running;
    }

    get source(): ServerCommand['source'] | undefined {
        return this.server?.source;
    }

    /** Start and restart are serialised so a burst of setting changes cannot start two servers. */
    start(): Promise<void> {
        this.busy = this.busy.then(() => this.doStart()).catch((e) => this.log(`start failed: ${String(e)}`));
        return this.busy;
    }

    restart(manual = false): Promise<void> {
        if (manual) {
            this.policy.reset();
            this.notified = false;
        }
        this.busy = this.busy
            .then(async () => {
                await this.doStop();
                await this.doStart();
            })
            .catch((e) => this.log(`restart failed: ${String(e)}`));
        return this.busy;
    }

    stop(): Promise<void> {
        this.busy = this.busy.then(() => this.doStop());
        return this.busy;
    }

    /** Push the current settings; the server also pulls them (workspace/configuration) on this. */
    async settingsChanged(): Promise<void> {
        if (this.client && this.running) {
            await this.client.sendNotification(DidChangeConfigurationNotification.type, {
                settings: { argus: this.settings() },
            });
        }
    }

    private settings() {
        const cfg = vscode.workspace.getConfiguration('argus');
        return toServerSettings((k) => cfg.get(k));
    }

    private log(msg: string): void {
        this.output.info(msg);
    }

    private async doStart(): Promise<void> {
        if (this.client) return;
        const trusted = vscode.workspace.isTrusted;
        const cfg = vscode.workspace.getConfiguration('argus');
        const folder = vscode.workspace.workspaceFolders?.[0];
        this.status.set('starting', undefined, !trusted);
        const safeDir = await this.safeDir();
        const res = await resolveServerCommand({
            // In an untrusted workspace VS Code already hides workspace values of these two
            // (restrictedConfigurations in package.json), so only the user's own settings count.
            path: expandHome(cfg.get<string>('path') ?? '', os.homedir()),
            interpreter: expandHome(cfg.get<string>('interpreter') ?? '', os.homedir()),
            trusted,
            pythonExtensionInterpreter: () => pythonExtensionInterpreter(folder?.uri),
            isExecutable,
            hasArgusPackage: (py) => hasArgusPackage(py, safeDir),
            which: (name) => which(name),
        });
        for (const t of res.tried) this.log(`tried ${t}`);
        if (!res.server) {
            this.server = undefined;
            this.status.set('notFound', res.problem, !trusted);
            this.log(res.problem ?? 'no server');
            this.notifyOnce(res.problem ?? 'The Argus language server could not be started.');
            return;
        }
        this.server = res.server;
        const { command, args, cwd } = launchSpec(res.server, safeDir);
        const source = res.server.source;
        this.log(`starting ${command} ${args.join(' ')} in ${cwd} (from ${source})${trusted ? '' : ' in restricted mode'}`);

        const serverOptions: ServerOptions = {
            command,
            args,
            transport: TransportKind.stdio,
            // Never the workspace folder: see launchSpec. The server learns the workspace from
            // initialize (rootUri / workspaceFolders), not from its working directory.
            options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: [
                { scheme: 'file', language: 'python' },
                { scheme: 'untitled', language: 'python' },
            ],
            outputChannel: this.output,
            // Trust travels here only: the server shows no Profile lenses and refuses
            // argus.profile when it starts with trusted: false. Granting trust restarts the
            // client (extension.ts), so the new server gets trusted: true.
            initializationOptions: initializationOptions(this.settings(), trusted),
            diagnosticCollectionName: 'argus',
            errorHandler: {
                error: () => ({ action: ErrorAction.Continue }),
                closed: () => {
                    if (this.policy.shouldRestart()) {
                        this.log('server exited; restarting');
                        return { action: CloseAction.Restart, handled: true };
                    }
                    const msg = `The Argus server (${command}) keeps exiting, so it was not restarted again. See "Argus: Show output"; fix the install or settings, then run "Argus: Restart server".`;
                    this.log(msg);
                    this.status.set('stopped', msg, !vscode.workspace.isTrusted);
                    this.notifyOnce(msg);
                    return { action: CloseAction.DoNotRestart, handled: true };
                },
            },
            middleware: {
                workspace: {
                    // Answer the server's pull for section "argus" with the normalised settings
                    // (its names, not the raw settings.json shape).
                    configuration: async (params, token, next) => {
                        const raw = await next(params, token);
                        if (!Array.isArray(raw)) return raw;
                        return params.items.map((item, i) => (item.section === 'argus' ? this.settings() : raw[i]));
                    },
                },
                // Restricted mode: diagnostics and text-edit quick fixes only. Anything that asks
                // VS Code to run a server command (the Profile lens, argus.profile) is withheld,
                // on top of the server's own refusal. In trusted mode the lens commands are the
                // server's executeCommandProvider commands, which the client registers itself:
                // a click sends workspace/executeCommand. The server's work-done progress shows
                // in the status bar; the running lens's own command (argus.profile.cancel) cancels.
                provideCodeActions: async (doc, range, ctx, token, next) => {
                    const actions = await next(doc, range, ctx, token);
                    if (vscode.workspace.isTrusted || !actions) return actions;
                    return actions.filter((a) => !(a instanceof vscode.CodeAction ? a.command : true));
                },
                provideCodeLenses: (doc, token, next) => (vscode.workspace.isTrusted ? next(doc, token) : []),
                executeCommand: (command, args, next) => {
                    if (!vscode.workspace.isTrusted) {
                        void vscode.window.showWarningMessage(
                            `Argus: "${command}" is disabled in an untrusted workspace (restricted mode shows diagnostics only).`,
                        );
                        return undefined;
                    }
                    // "Optimize this kernel": preview the server's diff and apply only on "Apply".
                    return command === OPTIMIZE_COMMAND ? optimizeThenPreview(args, next) : next(command, args);
                },
            },
        };

        const client = new LanguageClient('argus', 'Argus', serverOptions, clientOptions);
        client.onDidChangeState((e) => {
            if (e.newState === State.Running) this.status.set('running', `${command} ${args.join(' ')}`, !vscode.workspace.isTrusted);
            else if (e.newState === State.Starting) this.status.set('starting', undefined, !vscode.workspace.isTrusted);
            else if (this.status.state !== 'notFound') this.status.set('stopped', undefined, !vscode.workspace.isTrusted);
        });
        this.client = client;
        try {
            await client.start();
        } catch (e) {
            // Spawning failed (bad executable) or the server died during initialize.
            const msg = `The Argus server (${command} ${args.join(' ')}) failed to start: ${e instanceof Error ? e.message : String(e)}`;
            this.log(msg);
            this.status.set('stopped', msg, !trusted);
            this.notifyOnce(msg);
            this.client = undefined;
            try {
                await client.dispose();
            } catch {
                /* already dead */
            }
        }
    }

    private async doStop(): Promise<void> {
        const c = this.client;
        this.client = undefined;
        if (c) {
            try {
                await c.stop(5000);
            } catch (e) {
                this.log(`stop: ${String(e)}`);
            }
            await c.dispose().catch(() => undefined);
        }
        this.status.set('idle');
    }

    private notifyOnce(message: string): void {
        if (this.notified) return;
        this.notified = true;
        void vscode.window.showErrorMessage(`Argus: ${message}`, 'Open Settings', 'Show Output').then((pick) => {
            if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'argus.');
            else if (pick === 'Show Output') this.output.show(true);
        });
    }

    async dispose(): Promise<void> {
        await this.stop();
    }
}
