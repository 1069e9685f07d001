// "Argus: Open rule documentation". Each diagnostic from the server carries its rule's page
// (codeDescription.href), so the command needs no URL table of its own: it opens the page of the
// diagnostic under the cursor, or offers the rules reported in this file.
import * as vscode from 'vscode';

interface RuleLink {
    code: string;
    target: vscode.Uri;
    message: string;
}

function argusLinks(diags: readonly vscode.Diagnostic[]): RuleLink[] {
    const out: RuleLink[] = [];
    for (const d of diags) {
        if (d.source !== 'argus' || typeof d.code !== 'object' || d.code === null) continue;
        out.push({ code: String(d.code.value), target: d.code.target, message: d.message });
    }
    return out;
}

export async function openRuleDocumentation(code?: unknown): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    let links: RuleLink[];
    if (typeof code === 'string' && code) {
        // Called with a code (e.g. from a keybinding or another extension): look for it anywhere.
        links = vscode.languages.getDiagnostics().flatMap(([, ds]) => argusLinks(ds)).filter((l) => l.code === code.toUpperCase());
    } else if (editor) {
        const all = vscode.languages.getDiagnostics(editor.document.uri);
        const here = all.filter((d) => d.range.contains(editor.selection.active));
        links = argusLinks(here);
        if (links.length === 0) links = argusLinks(all);
    } else {
        links = [];
    }
    const unique = new Map<string, RuleLink>();
    for (const l of links) if (!unique.has(l.code)) unique.set(l.code, l);
    if (unique.size === 0) {
        void vscode.window.showInformationMessage(
            'Argus: no Argus diagnostic here. Each diagnostic links its rule page from its code in the Problems panel and the hover.',
        );
        return;
    }
    let pick: RuleLink | undefined = unique.values().next().value;
    if (unique.size > 1) {
        const items = [...unique.values()].map((l) => ({ label: l.code, detail: l.message, link: l }));
        pick = (await vscode.window.showQuickPick(items, { placeHolder: 'Open the documentation of which rule?' }))?.link;
    }
    if (pick) await vscode.env.openExternal(pick.target);
}
