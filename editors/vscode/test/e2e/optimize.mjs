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
//   ARGUS_E2E_ARTIFACTS, ARGUS_VSCODE_TOOLS, CHROMIUM   as for run.mjs (the editor: workbench.mjs)
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Workbench, fail, requireInputs, runAsScript, stepLogger, waitForFileChange } from './workbench.mjs';

const { ARGUS_E2E_VSIX: vsix, ARGUS_E2E_ARGUS: argus, ARGUS_E2E_KERNEL: kernelFile, ARGUS_E2E_BASE_URL: baseUrl } = process.env;
const expected = process.env.ARGUS_E2E_EXPECT || '';
const artifacts = process.env.ARGUS_E2E_ARTIFACTS || 'test-artifacts/vscode-optimize';
const step = stepLogger('optimize e2e');

// The `llm` policy against the scripted endpoint, one candidate.
const OPTIMIZE_SETTINGS = {
    'argus.optimize.policy': 'llm',
    'argus.optimize.baseUrl': baseUrl,
    'argus.optimize.model': 'scripted',
    'argus.optimize.apiKeyEnv': 'ARGUS_TEST_KEY',
    'argus.optimize.budget': 1,
};

async function main() {
    requireInputs([
        ['argus', argus],
        ['vsix', vsix],
        ['kernel', kernelFile],
    ]);
    if (!baseUrl) fail('ARGUS_E2E_BASE_URL is not set');
    const wb = new Workbench({ artifacts, step, tmpPrefix: 'argus-opt-e2e-' });
    const fileName = path.basename(kernelFile);
    const filePath = path.join(wb.workspace, fileName);
    copyFileSync(kernelFile, filePath);
    copyFileSync(`${kernelFile}.argus.toml`, `${filePath}.argus.toml`);
    const original = readFileSync(filePath, 'utf8');
    try {
        await wb.start({ vsix, argus, settings: OPTIMIZE_SETTINGS });
        await wb.openFolder();
        await wb.quickOpen(fileName);
        const preview = await openPreview(wb);
        if (readFileSync(filePath, 'utf8') !== original) fail('the file changed before Apply was clicked');
        const changed = await applyAndSave(wb, preview.apply, filePath, original);
        console.log(JSON.stringify({ ok: true, diffTab: preview.diffTab, toast: preview.toast, changed, screenshot: preview.screenshot }));
    } catch (e) {
        await wb.shot('failure.png').catch(() => undefined);
        throw e;
    } finally {
        await wb.close();
    }
}

/** Clicks "✨ Optimize" and waits for the diff preview and its "Apply" notification. */
async function openPreview(wb) {
    const page = wb.page;
    step('waiting for the Optimize code lens');
    const lens = page.locator('.monaco-editor .codelens-decoration a', { hasText: 'Optimize' });
    await wb.expectVisible(lens.first(), 90000, 'failure-no-optimize-lens.png', 'no "✨ Optimize" code lens after 90 s');
    step(`clicking the code lens: ${(await lens.first().innerText()).trim()}`);
    await lens.first().click();

    step('waiting for the diff preview (the agent runs gates 1 and 2 under the Triton interpreter)');
    await wb.expectVisible(page.locator('.monaco-diff-editor').first(), 300000, 'failure-no-diff.png', 'no diff preview within 300 s');
    const diffTab = (await page.locator('.tab.active').first().innerText()).trim();
    step(`diff editor open: ${diffTab}`);
    const apply = page.locator('.notifications-toasts .monaco-button, .notification-toast .monaco-button', { hasText: /^Apply$/ });
    await apply.first().waitFor({ timeout: 30000 });
    const toast = (await page.locator('.notification-toast').first().innerText()).replace(/\s+/g, ' ').trim();
    step(`notification: ${toast}`);
    await page.waitForTimeout(1000);
    const screenshot = await wb.shot('01-diff-preview.png');
    return { apply, diffTab, toast, screenshot };
}

/** Clicks Apply, saves, and returns the lines of the file on disk that the candidate changed. */
async function applyAndSave(wb, apply, filePath, original) {
    const page = wb.page;
    step('clicking Apply');
    await apply.first().click();
    // The server's workspace/applyEdit changes the buffer (the user saves as usual): "File: Save
    // All" from the command palette, which saves the file whichever side of the diff has focus.
    await page.waitForTimeout(2000);
    await page.keyboard.press('Escape');
    await wb.runCommand('File: Save All');
    const saved = await waitForFileChange(filePath, original, 20000);
    await wb.shot('02-applied.png');
    if (saved === original) fail('the file on disk is unchanged after Apply and Ctrl+S');
    writeFileSync(path.join(artifacts, `applied-${path.basename(filePath)}`), saved);
    const changed = saved.split('\n').filter((l, i) => l !== original.split('\n')[i]);
    step(`changed lines: ${JSON.stringify(changed)}`);
    if (expected && !saved.includes(expected)) fail(`the saved file lacks ${JSON.stringify(expected)}`);
    return changed;
}

runAsScript(import.meta.url, { label: 'optimize e2e', minutes: 9, step }, main);
