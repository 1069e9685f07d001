// The interpreter the user picked in the Python extension (ms-python.python), when it is
// installed. Optional: any failure means "no interpreter from there", never an error for the user.
import * as vscode from 'vscode';

interface PythonApi {
    environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
        resolveEnvironment(env: { path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
        onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
    };
    settings?: {
        getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
    };
}

async function api(): Promise<PythonApi | undefined> {
    const ext = vscode.extensions.getExtension<PythonApi>('ms-python.python');
    if (!ext) return undefined;
    return ext.isActive ? ext.exports : await ext.activate();
}

export async function pythonExtensionInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
    const py = await api();
    if (!py) return undefined;
    // The environments API is the current one; getExecutionDetails is the older, still-shipped one.
    if (py.environments) {
        const active = py.environments.getActiveEnvironmentPath(resource);
        const env = await py.environments.resolveEnvironment(active);
        const exe = env?.executable.uri?.fsPath;
        if (exe) return exe;
    }
    const cmd = py.settings?.getExecutionDetails(resource).execCommand;
    // A multi-word execCommand (e.g. "conda run ...") cannot be used as a plain executable.
    return cmd && cmd.length === 1 ? cmd[0] : undefined;
}

/** Calls `listener` when the user picks another interpreter; a no-op without the extension. */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
    try {
        const py = await api();
        return py?.environments?.onDidChangeActiveEnvironmentPath(() => listener());
    } catch {
        return undefined;
    }
}
