// The status-bar item: one glance tells whether Argus is checking this file, and a click opens
// the server log, which is where the reason is when it is not.
import * as vscode from 'vscode';

export type ServerState = 'idle' | 'starting' | 'running' | 'stopped' | 'notFound';

const LOOK: Record<ServerState, { icon: string; text: string }> = {
    idle: { icon: '$(circle-outline)', text: 'waiting for a Triton file' },
    starting: { icon: '$(loading~spin)', text: 'starting' },
    running: { icon: '$(check)', text: 'running' },
    stopped: { icon: '$(error)', text: 'stopped' },
    notFound: { icon: '$(warning)', text: 'server not found' },
};

export class StatusItem implements vscode.Disposable {
    private readonly item = vscode.window.createStatusBarItem('argus.status', vscode.StatusBarAlignment.Right, 100);
    state: ServerState = 'idle';

    constructor() {
        this.item.name = 'Argus';
        this.item.command = 'argus.showOutput';
        this.set('idle');
        this.item.show();
    }

    set(state: ServerState, detail?: string, restricted = false): void {
        this.state = state;
        const look = LOOK[state];
        this.item.text = `${look.icon} Argus`;
        const lines = [`Argus: ${look.text}${restricted ? ' (restricted mode: diagnostics only)' : ''}`];
        if (detail) lines.push(detail);
        lines.push('Click to show the server log.');
        this.item.tooltip = lines.join('\n');
        this.item.backgroundColor =
            state === 'stopped' || state === 'notFound'
                ? new vscode.ThemeColor('statusBarItem.warningBackground')
                : undefined;
    }

    dispose(): void {
        this.item.dispose();
    }
}
