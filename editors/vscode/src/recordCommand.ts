// "Argus: Record launches": what the input box accepts and what is sent to the server's
// `argus.record` (argus_lsp/features/record_command.py). Pure, so it is unit-tested; the UI is
// record.ts.

/** The command the palette shows; it asks for the command line and calls the server's. */
export const RECORD_UI_COMMAND = 'argus.recordLaunches';
/** The server-side command (its executeCommandProvider), registered by the language client. */
export const RECORD_SERVER_COMMAND = 'argus.record';
export const DEFAULT_RECORD_COMMAND = 'pytest';

export interface RecordArguments {
    command: string;
}

/** Why the input box refuses `line` (the server splits it like a POSIX shell), or undefined. */
export function validateCommandLine(line: string): string | undefined {
    if (!line.trim()) return 'Type the command that runs your kernels, e.g. pytest -x tests';
    let quote: string | undefined;
    let escaped = false;
    for (const ch of line) {
        if (escaped) {
            escaped = false; // a backslash escapes the next character, except inside '...'
        } else if (ch === '\\' && quote !== "'") {
            escaped = true;
        } else if (quote) {
            if (ch === quote) quote = undefined;
        } else if (ch === "'" || ch === '"') {
            quote = ch;
        }
    }
    if (quote) return `Unclosed ${quote} quote`;
    return escaped ? 'The line ends with a lone backslash' : undefined;
}

/** The server command's argument for an accepted command line. */
export function recordArguments(line: string): RecordArguments {
    return { command: line.trim() };
}

/** The one line to show for the server's answer, or undefined when the server said it already. */
export function describeOutcome(result: unknown): string | undefined {
    if (!result || typeof result !== 'object') return undefined;
    const status = (result as { status?: unknown }).status;
    if (status === 'running') return 'Argus: a recording is already running.';
    if (status === 'cancelled') return 'Argus: recording cancelled.';
    return undefined; // ok / error / timeout: the server shows its own message
}
