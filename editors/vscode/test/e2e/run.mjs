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
//   ARGUS_VSCODE_TOOLS, CHROMIUM   the tools (see workbench.mjs, which starts and drives the editor)
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
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Workbench, fail, requireInputs, runAsScript, stepLogger, waitForFileChange } from './workbench.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../../..');
const vsix = process.env.ARGUS_E2E_VSIX;
const argus = process.env.ARGUS_E2E_ARGUS || path.join(repo, '.venv/bin/argus');
const corpus =
    process.env.ARGUS_E2E_CORPUS ||
    [path.join(repo, '../shared/corpus/vector_add_v2.py'), '/work/shared/corpus/vector_add_v2.py'].find((p) => existsSync(p));
const code = process.env.ARGUS_E2E_CODE || 'MB002';
const artifacts = process.env.ARGUS_E2E_ARTIFACTS || path.join(repo, 'test-artifacts/vscode');
const restricted = process.env.ARGUS_E2E_RESTRICTED === '1';

const step = stepLogger('e2e');

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

async function main() {
    requireInputs([
        ['argus', argus],
        ['vsix', vsix],
        ['corpus file', corpus],
    ]);
    const wb = new Workbench({ artifacts, step });
    const { text, line } = stripMarkers(readFileSync(corpus, 'utf8'), code);
    if (!line) fail(`${corpus} has no "# expect: ${code}" marker`);
    const fileName = path.basename(corpus);
    const filePath = path.join(wb.workspace, fileName);
    writeFileSync(filePath, text);
    step(`workspace ${wb.workspace}: ${fileName}, expecting ${code} at line ${line}`);
    const profileKernel = writeProfileTask(filePath, text);
    if (profileKernel) step(`profile task for ${profileKernel} in ${fileName}.argus.toml`);

    try {
        // Restricted run: trust on, no startup prompt, so the new folder stays untrusted.
        await wb.start({ vsix, argus, restricted });
        await wb.openFolder();
        await wb.quickOpen(fileName);
        await expectProblem(wb, line);
        const profileLens = wb.page.locator('.monaco-editor .codelens-decoration a', { hasText: /Profile|profil/ });
        if (restricted) {
            const result = await checkRestricted(wb, profileLens, profileKernel);
            console.log(JSON.stringify({ ok: true, restricted: true, code, line, ...result }));
            return;
        }
        if (profileKernel) {
            step('waiting for the Profile code lens');
            const what = `no "▶ Profile" code lens above ${profileKernel} after 30 s`;
            await wb.expectVisible(profileLens.first(), 30000, 'failure-no-profile-lens.png', what);
            step(`code lens: ${(await profileLens.first().innerText()).trim()}`);
        }
        const diagShot = await showFinding(wb, text, line);
        const fixedLine = await applyQuickFix(wb, filePath, text, line);
        // The Profile lens, last (it runs the file).
        const profiled = profileKernel ? await clickProfileLens(wb, profileLens) : null;
        console.log(JSON.stringify({ ok: true, code, line, fixedLine: fixedLine.trim(), profiled, screenshot: diagShot }));
    } catch (e) {
        await wb.shot('failure.png').catch(() => undefined);
        throw e;
    } finally {
        await wb.close();
    }
}

/** The Problems panel lists `code` at `line`, with "argus" as its source. */
async function expectProblem(wb, line) {
    const page = wb.page;
    step('opening the Problems panel');
    await page.keyboard.press('Control+Shift+M');
    const panel = page.locator('.markers-panel');
    await panel.waitFor({ timeout: 20000 });
    const rows = panel.locator('.monaco-list-row', { hasText: code });
    step(`waiting for ${code} in the Problems panel`);
    await wb.expectVisible(rows.first(), 120000, 'failure-no-diagnostic.png', `no ${code} in the Problems panel after 120 s`);
    const rowText = await rows.first().innerText();
    step(`problem row: ${rowText.replace(/\s+/g, ' ')}`);
    if (!rowText.includes(`Ln ${line},`)) fail(`${code} is listed, but not at line ${line}: ${rowText}`);
    if (!/argus/.test(rowText)) fail(`the ${code} row does not name its source "argus": ${rowText}`);
}

/**
 * Restricted Mode: no Profile lens while untrusted; after trust is granted in the Workspace Trust
 * editor, the lens appears. Returns the figures the pytest wrapper checks.
 */
async function checkRestricted(wb, profileLens, profileKernel) {
    const page = wb.page;
    // The extension declares limited support, so it runs in Restricted Mode and the diagnostic
    // came through; the workbench must really be in that mode.
    const restrictedItem = page.locator('.statusbar-item', { hasText: 'Restricted Mode' });
    await restrictedItem.first().waitFor({ timeout: 10000 });
    let profileLenses = null;
    if (profileKernel) {
        // The trusted run sees the lens within a second or two of the diagnostic; give the editor
        // the same time here, then there must be none (the server is told trusted: false, and the
        // client withholds code lenses in restricted mode).
        await page.waitForTimeout(4000);
        profileLenses = await profileLens.count();
        step(`Profile lenses in Restricted Mode: ${profileLenses}`);
        if (profileLenses !== 0) {
            await wb.shot('failure-restricted-lens.png');
            fail(`a Profile code lens shows in Restricted Mode: ${JSON.stringify(await profileLens.allInnerTexts())}`);
        }
    }
    const screenshot = await wb.shot('restricted-diagnostic.png');
    if (!profileKernel) return { profileLenses, lensAfterTrust: null, screenshot };
    // Grant trust: the extension restarts the server with trusted: true (the only way the server
    // learns it), and the lens appears.
    step('granting workspace trust');
    await restrictedItem.first().click();
    const trust = page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first();
    await trust.waitFor({ timeout: 15000 });
    await trust.click();
    // The trust editor opens as a modal over the file: close it.
    await restrictedItem.waitFor({ state: 'detached', timeout: 15000 });
    await page
        .locator('.monaco-modal-editor-block .codicon-close, .monaco-modal-editor-block [aria-label^="Close"]')
        .first()
        .click({ timeout: 5000 })
        .catch(() => step('could not close the trust editor (the lens is checked in the DOM anyway)'));
    await wb.expectVisible(profileLens.first(), 30000, 'failure-no-lens-after-trust.png', 'no Profile lens 30 s after trust was granted');
    const lensAfterTrust = (await profileLens.first().innerText()).trim();
    step(`code lens after trust: ${lensAfterTrust}`);
    await wb.shot('trusted-lens.png');
    return { profileLenses, lensAfterTrust, screenshot };
}

/** Cursor onto the finding and its hover shown (the squiggle and the witness in the screenshot). */
async function showFinding(wb, text, line) {
    const page = wb.page;
    // Go to Line accepts line:column; on the finding the lightbulb shows.
    const col = (text.split('\n')[line - 1].search(/\S/) ?? 0) + 3;
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+G');
    await page.locator('.quick-input-widget input').waitFor({ timeout: 10000 });
    await page.keyboard.type(`${line}:${col}`);
    await page.keyboard.press('Enter');
    await page.waitForTimeout(1000);
    // Show Hover (Ctrl+K Ctrl+I): the finding's message and witness.
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+I');
    await page.locator('.monaco-hover').first().waitFor({ state: 'visible', timeout: 10000 }).catch(() => step('no hover shown'));
    await page.waitForTimeout(500);
    const diagShot = await wb.shot('01-diagnostic.png');
    await page.keyboard.press('Escape');
    return diagShot;
}

/** The first real fix from the lightbulb: the problem goes, and after Ctrl+S the fix is on disk. Returns the fixed line. */
async function applyQuickFix(wb, filePath, text, line) {
    const page = wb.page;
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
    await wb.shot('02-quick-fix-menu.png');
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
        await wb.shot('failure-still-listed.png');
        throw new Error(`${code} still listed 60 s after the quick fix: ${e.message}`);
    }
    await page.waitForTimeout(500);
    await wb.shot('03-fixed.png');

    // Save, and check that the fix is in the file, not only on screen.
    await page.keyboard.press('Control+S');
    const saved = await waitForFileChange(filePath, text, 15000);
    if (saved === text) fail('the file on disk is unchanged after the quick fix and Ctrl+S');
    const fixedLine = saved.split('\n')[line - 1];
    step(`line ${line} after the fix: ${fixedLine.trim()}`);
    writeFileSync(path.join(artifacts, `fixed-${path.basename(filePath)}`), saved);
    return fixedLine;
}

/**
 * Clicks the Profile lens: its command is the server's argus.profile (registered by
 * vscode-languageclient from executeCommandProvider), so the click must come back from the server
 * as a new lens title. Returns that title.
 */
async function clickProfileLens(wb, profileLens) {
    step('clicking the Profile code lens');
    await profileLens.first().click();
    let profiled;
    try {
        // A result reads like "1.64 ms, 669 TFLOP/s, ..."; a failure "⚠ profile failed: ...".
        const handle = await wb.page.waitForFunction(
            () =>
                [...document.querySelectorAll('.monaco-editor .codelens-decoration a')]
                    .map((a) => a.textContent ?? '')
                    .find((t) => /profile failed|\d (ms|µs|s)\b/.test(t)),
            null,
            { timeout: 60000 },
        );
        profiled = String(await handle.jsonValue()).trim();
    } catch (e) {
        await wb.shot('failure-profile-click.png');
        throw new Error(`the Profile lens did not come back with a result or an error within 60 s: ${e.message}`);
    }
    step(`code lens after the click: ${profiled}`);
    await wb.shot('04-profile-lens.png');
    return profiled;
}

// Run only when executed (the pytest wrapper), not when imported for stripMarkers.
runAsScript(import.meta.url, { label: 'e2e', minutes: 6, step }, main);
