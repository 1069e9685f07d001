// Decides how to start the Argus language server. Pure: every file-system or process probe is
// passed in, so the order of precedence is unit-tested without VS Code (test/unit).
//
// Precedence (issue 7): argus.path, then argus.interpreter, then the interpreter chosen in the
// Python extension, then `argus` on PATH. An explicitly configured path or interpreter that does
// not work is reported, not skipped: silently falling through to another install would hide a
// broken setting and run a different server version than the user asked for.

export interface ServerCommand {
    command: string;
    args: string[];
    /** Which setting or fallback produced it, for the log and the error message. */
    source: 'argus.path' | 'argus.interpreter' | 'python-extension' | 'PATH';
}

export interface Resolution {
    server?: ServerCommand;
    /** What was tried, in order, with why each was rejected. Shown in the output channel. */
    tried: string[];
    /** Set when nothing works: one sentence telling the user what to do. */
    problem?: string;
}

export interface ResolveInputs {
    path: string;
    interpreter: string;
    /** False in an untrusted workspace: the Python extension may pick a workspace-local venv. */
    trusted: boolean;
    /** The Python extension's interpreter for the workspace, if it is installed and has one. */
    pythonExtensionInterpreter: () => Promise<string | undefined>;
    isExecutable: (file: string) => Promise<boolean>;
    /** Does this Python have the argus_lsp package (without importing it or anything of the workspace)? */
    hasArgusPackage: (python: string) => Promise<boolean>;
    /** PATH lookup of a bare command name. */
    which: (name: string) => Promise<string | undefined>;
}

/** The module guaranteed by the server package; `python -m argus_lsp.server` speaks LSP on stdio. */
export const SERVER_MODULE = 'argus_lsp.server';

/**
 * `-P` (Python >= 3.11, which the server requires): do not put the working directory (for `-m`)
 * or '' (for `-c`) first on sys.path. Without it a workspace file named `numpy.py`,
 * `argus_lsp.py` or `analyzers/__init__.py` would be imported, that is run, by the server.
 * Unlike `-I` it keeps PYTHONPATH and the user site-packages, where a user install may live.
 */
export const SAFE_PATH_FLAG = '-P';

/** The exact process the extension spawns: executable, arguments and working directory. */
export interface LaunchSpec {
    command: string;
    args: string[];
    cwd: string;
}

/**
 * How a resolved server is started. `safeDir` is a directory the workspace does not control (the
 * extension's global storage, else its install directory): never the workspace folder, so neither
 * the working directory nor anything derived from it can shadow a module the server imports.
 */
export function launchSpec(server: ServerCommand, safeDir: string): LaunchSpec {
    return { command: server.command, args: [...server.args], cwd: safeDir };
}

export const INSTALL_HINT =
    'Install the server with `pip install argus-lsp` (in the environment you use for Triton), ' +
    'or set "argus.path" to an argus executable or "argus.interpreter" to a Python that has it.';

export function expandHome(p: string, home: string | undefined): string {
    if (home && (p === '~' || p.startsWith('~/'))) {
        return home + p.slice(1);
    }
    return p;
}

export async function resolveServerCommand(inp: ResolveInputs): Promise<Resolution> {
    const tried: string[] = [];

    const path = inp.path.trim();
    if (path) {
        if (await inp.isExecutable(path)) {
            return { server: { command: path, args: ['serve'], source: 'argus.path' }, tried };
        }
        tried.push(`argus.path = ${path}: not an executable file`);
        return { tried, problem: `"argus.path" is set to ${path}, which is not an executable file. ${INSTALL_HINT}` };
    }

    const interpreter = inp.interpreter.trim();
    if (interpreter) {
        if (!(await inp.isExecutable(interpreter))) {
            tried.push(`argus.interpreter = ${interpreter}: not an executable file`);
            return { tried, problem: `"argus.interpreter" is set to ${interpreter}, which is not an executable file. ${INSTALL_HINT}` };
        }
        if (!(await inp.hasArgusPackage(interpreter))) {
            tried.push(`argus.interpreter = ${interpreter}: the argus_lsp package is not installed there`);
            return {
                tried,
                problem: `The Python in "argus.interpreter" (${interpreter}) does not have the argus-lsp package: run \`${interpreter} -m pip install argus-lsp\`, or change the setting.`,
            };
        }
        return { server: { command: interpreter, args: [SAFE_PATH_FLAG, '-m', SERVER_MODULE], source: 'argus.interpreter' }, tried };
    }

    if (inp.trusted) {
        let py: string | undefined;
        try {
            py = await inp.pythonExtensionInterpreter();
        } catch (e) {
            tried.push(`Python extension: ${String(e)}`);
        }
        if (py) {
            if ((await inp.isExecutable(py)) && (await inp.hasArgusPackage(py))) {
                return { server: { command: py, args: [SAFE_PATH_FLAG, '-m', SERVER_MODULE], source: 'python-extension' }, tried };
            }
            tried.push(`Python extension interpreter ${py}: no argus_lsp package`);
        } else {
            tried.push('Python extension: not installed or no interpreter selected');
        }
    } else {
        tried.push('Python extension interpreter: skipped in an untrusted workspace');
    }

    const onPath = await inp.which('argus');
    if (onPath) {
        return { server: { command: onPath, args: ['serve'], source: 'PATH' }, tried };
    }
    tried.push('argus on PATH: not found');
    return { tried, problem: `The Argus language server was not found. ${INSTALL_HINT}` };
}
