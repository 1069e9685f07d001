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
    profile: ProfileSettings;
    // The launch file kernels are bound from (`argus record` writes it), relative to the workspace
    // folder; null: the server's default, `.argus/launches.json` when it exists.
    launches: string | null;
    // Quiet time after the last change before checking (onType), in milliseconds.
    debounceMs: number;
    // CPU seconds one kernel's analysis may take; null: the project's `kernel-timeout`, else 10.
    kernelTimeout: number | null;
    // Worker processes the checks run in (0: threads of the server).
    checkProcesses: 0 | 1 | 2;
    // How long a hover waits for its kernel's trace before answering "being traced", in ms.
    hoverWaitMs: number;
}

// The "Profile" code lens (argus_lsp/features/profile_lens.py): where and how the server runs a
// kernel's task when the user clicks it. VS Code nests `argus.profile.target` as
// `{"profile": {"target": ...}}`, which is the shape the server reads (`_profile_keys`).
export interface ProfileSettings {
    target: string; // "local" or "ssh://[user@]host[:port]"
    python: string | null; // interpreter with torch + triton on the target; null: the server's default
    timeout: number; // seconds before the worker is killed
    counters: boolean; // also collect ncu / rocprof counters
}

export const DEFAULT_PROFILE: ProfileSettings = { target: 'local', python: null, timeout: 600, counters: false };

export const DEFAULT_SETTINGS: ServerSettings = {
    select: null,
    ignore: [],
    severity: {},
    run: 'onType',
    profile: DEFAULT_PROFILE,
    launches: null,
    debounceMs: 150,
    kernelTimeout: null,
    checkProcesses: 1,
    hoverWaitMs: 40,
};

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

function profile(get: (key: string) => unknown): ProfileSettings {
    const target = get('profile.target');
    const python = get('profile.python');
    const timeout = get('profile.timeout');
    const counters = get('profile.counters');
    const t = typeof target === 'string' ? target.trim() : '';
    const py = typeof python === 'string' ? python.trim() : '';
    return {
        // A target that is neither "local" nor ssh:// is sent as written: the server rejects it
        // with a message naming the setting, rather than this silently profiling somewhere else.
        target: t || DEFAULT_PROFILE.target,
        python: py || null,
        timeout:
            typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_PROFILE.timeout,
        counters: counters === true,
    };
}

function finiteAtLeast(value: unknown, low: number): value is number {
    return typeof value === 'number' && Number.isFinite(value) && value >= low;
}

/** `get` reads one key of the "argus" section (vscode.WorkspaceConfiguration.get in the extension). */
export function toServerSettings(get: (key: string) => unknown): ServerSettings {
    const run = get('run');
    const select = codes(get('select'));
    const launches = get('launches');
    const debounce = get('debounceMs');
    const timeout = get('kernelTimeout');
    const processes = get('checkProcesses');
    const hoverWait = get('hoverWaitMs');
    return {
        select: select.length > 0 ? select : null,
        ignore: codes(get('ignore')),
        severity: severities(get('severityOverrides')),
        run: run === 'onSave' ? 'onSave' : 'onType',
        profile: profile(get),
        launches: typeof launches === 'string' && launches.trim() ? launches.trim() : null,
        debounceMs: finiteAtLeast(debounce, 0) ? debounce : DEFAULT_SETTINGS.debounceMs,
        kernelTimeout: finiteAtLeast(timeout, 0) && timeout > 0 ? timeout : null,
        checkProcesses: processes === 0 || processes === 2 ? processes : 1,
        hoverWaitMs: finiteAtLeast(hoverWait, 0) ? hoverWait : DEFAULT_SETTINGS.hoverWaitMs,
    };
}

/**
 * What the client sends as `initializationOptions`: the settings plus whether the workspace is
 * trusted, under `"argus"`. The server reads trust from here only (never from
 * workspace/configuration, which a workspace can set), so a change of trust needs a restart.
 */
export function initializationOptions(settings: ServerSettings, trusted: boolean): { argus: ServerSettings & { trusted: boolean } } {
    return { argus: { ...settings, trusted } };
}

/** Settings that need a server restart rather than a live update (they change what is started). */
export const RESTART_KEYS = ['argus.path', 'argus.interpreter'];
/** Settings the running server picks up live through workspace/didChangeConfiguration. */
// (argus.optimize.* is pulled by the server each time a run starts: src/optimize.ts, docs/optimize.md.)
export const LIVE_KEYS = [
    'argus.select',
    'argus.ignore',
    'argus.severityOverrides',
    'argus.run',
    'argus.debounceMs',
    'argus.kernelTimeout',
    'argus.checkProcesses',
    'argus.hoverWaitMs',
    'argus.profile',
    'argus.optimize',
    'argus.launches',
];
/** The profile settings as package.json declares them (each maps to a key of ProfileSettings). */
export const PROFILE_KEYS = ['argus.profile.target', 'argus.profile.python', 'argus.profile.timeout', 'argus.profile.counters'];
/**
 * The server's commands that run the workspace's code: `argus.profile` (the lens) and
 * `argus.record` (behind "Argus: Record launches", record.ts), with their cancel commands. All are
 * declared in package.json with `"enablement": "isWorkspaceTrusted"`, and the client refuses them
 * when untrusted, on top of the server's own refusal.
 */
export const TRUSTED_ONLY_COMMANDS = ['argus.profile', 'argus.profile.cancel', 'argus.optimize', 'argus.optimize.apply', 'argus.optimize.cancel', 'argus.record', 'argus.record.cancel'];
