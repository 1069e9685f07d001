// The real file-system and process probes behind resolveServerCommand. No vscode import, so the
// unit tests can exercise them against temporary files.
import { execFile } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';

export async function isExecutable(file: string): Promise<boolean> {
    try {
        const st = await fs.stat(file);
        if (!st.isFile()) return false;
        if (process.platform === 'win32') return true;
        await fs.access(file, constants.X_OK);
        return true;
    } catch {
        return false;
    }
}

export async function which(name: string, envPath = process.env.PATH ?? ''): Promise<string | undefined> {
    const exts = process.platform === 'win32' ? ['.exe', '.cmd', '.bat', ''] : [''];
    for (const dir of envPath.split(path.delimiter)) {
        if (!dir) continue;
        for (const ext of exts) {
            const candidate = path.join(dir, name + ext);
            if (await isExecutable(candidate)) return candidate;
        }
    }
    return undefined;
}

// find_spec on the top-level package locates it without importing (running) any of its code.
const HAS_ARGUS = 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("argus_lsp") else 3)';

/**
 * The probe's argv. `-c` puts '' (the working directory) first on sys.path; `-P` keeps it off, so
 * an `argus_lsp.py` in the working directory can neither answer "installed" nor run.
 */
export function hasArgusArgs(): string[] {
    return ['-P', '-c', HAS_ARGUS];
}

/** `cwd` must be a directory the workspace does not control (see serverCommand.launchSpec). */
export function hasArgusPackage(python: string, cwd: string, timeoutMs = 15000): Promise<boolean> {
    return new Promise((resolve) => {
        execFile(python, hasArgusArgs(), { cwd, timeout: timeoutMs, windowsHide: true }, (err) => resolve(!err));
    });
}
