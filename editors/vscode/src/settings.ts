// Maps the user's "argus" settings to the object the server reads from workspace/configuration
// (section "argus") and receives in initializationOptions. Pure, so it is unit-tested.
// Normalising here (upper-case codes, dropped junk) keeps the server from having to guess what a
// hand-edited settings.json meant, and gives both ends one shape.

export type Severity = 'error' | 'warning' | 'info' | 'hint' | 'off';
export type RunMode = 'onType' | 'onSave';

// The server's names (argus_lsp/settings.py): `severity` is the user-facing
// "argus.severityOverrides", and `select: null` means every rule, whereas an empty list would
// select none. The user setting's empty list means "no restriction", so it maps to null.
export interface ServerSettings {
    select: string[] | null;
    ignore: string[];
    severity: Record<string, Severity>;
    run: RunMode;
}

export const DEFAULT_SETTINGS: ServerSettings = { select: null, ignore: [], severity: {}, run: 'onType' };

const SEVERITIES: ReadonlySet<string> = new Set(['error', 'warning', 'info', 'hint', 'off']);
// A rule code or a prefix of one: letters then optional digits (MB, MB0, MB002).
const CODE = /^[A-Z]+[0-9]*$/;

function codes(value: unknown): string[] {
    if (typeof value === 'string') {
        // Accept "MB002, DF" as a convenience: people paste the CLI's --select value.
        value = value.split(',');
    }
    if (!Array.isArray(value)) {
        return [];
    }
    const out: string[] = [];
    for (const v of value) {
        if (typeof v !== 'string') continue;
        const c = v.trim().toUpperCase();
        if (CODE.test(c) && !out.includes(c)) out.push(c);
    }
    return out;
}

function severities(value: unknown): Record<string, Severity> {
    const out: Record<string, Severity> = {};
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        return out;
    }
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        const code = k.trim().toUpperCase();
        const sev = typeof v === 'string' ? v.trim().toLowerCase() : '';
        // "information" is what VS Code calls it; accept it as info.
        const norm = sev === 'information' ? 'info' : sev;
        if (CODE.test(code) && SEVERITIES.has(norm)) out[code] = norm as Severity;
    }
    return out;
}

/** `get` reads one key of the "argus" section (vscode.WorkspaceConfiguration.get in the extension). */
export function toServerSettings(get: (key: string) => unknown): ServerSettings {
    const run = get('run');
    const select = codes(get('select'));
    return {
        select: select.length > 0 ? select : null,
        ignore: codes(get('ignore')),
        severity: severities(get('severityOverrides')),
        run: run === 'onSave' ? 'onSave' : 'onType',
    };
}

/** Settings that need a server restart rather than a live update (they change what is started). */
export const RESTART_KEYS = ['argus.path', 'argus.interpreter'];
/** Settings the running server picks up live through workspace/didChangeConfiguration. */
export const LIVE_KEYS = ['argus.select', 'argus.ignore', 'argus.severityOverrides', 'argus.run'];
