// Does a Python buffer hold a Triton kernel? The extension activates on any Python file, but only
// starts a server once such a file is seen: most Python files in most workspaces are not kernels,
// and a server process per window for nothing is a cost users notice.

const IMPORT = /^\s*(?:import\s+triton\b|from\s+triton(?:\.[\w.]+)?\s+import\b)/m;
const DECORATOR = /^\s*@\s*(?:triton\.)?(?:jit|autotune|heuristics)\b/m;

export function containsTritonKernel(text: string): boolean {
    // Needs both an import and a kernel decorator; a file that only launches kernels imported
    // from elsewhere has nothing for Argus to check (launch sites are read alongside kernels).
    return IMPORT.test(text) && DECORATOR.test(text);
}
