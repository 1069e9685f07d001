import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ResolveInputs, SAFE_PATH_FLAG, SERVER_MODULE, expandHome, launchSpec, resolveServerCommand } from '../../src/serverCommand';

// A fake machine: which files are executable, which Pythons have argus_lsp, what is on PATH.
function inputs(over: Partial<ResolveInputs> & { exe?: string[]; withArgus?: string[]; onPath?: string }): ResolveInputs {
    const exe = new Set(over.exe ?? []);
    const withArgus = new Set(over.withArgus ?? []);
    return {
        path: '',
        interpreter: '',
        trusted: true,
        pythonExtensionInterpreter: async () => undefined,
        isExecutable: async (f) => exe.has(f),
        hasArgusPackage: async (p) => withArgus.has(p),
        which: async () => over.onPath,
        ...over,
    };
}

describe('resolveServerCommand', () => {
    it('prefers argus.path and runs `argus serve`', async () => {
        const r = await resolveServerCommand(
            inputs({ path: '/opt/argus', interpreter: '/usr/bin/python3', exe: ['/opt/argus', '/usr/bin/python3'], onPath: '/bin/argus' }),
        );
        assert.deepEqual(r.server, { command: '/opt/argus', args: ['serve'], source: 'argus.path' });
    });

    it('reports a broken argus.path instead of falling back to another server', async () => {
        const r = await resolveServerCommand(inputs({ path: '/nope/argus', onPath: '/bin/argus' }));
        assert.equal(r.server, undefined);
        assert.match(r.problem ?? '', /argus\.path.*\/nope\/argus/);
        assert.match(r.problem ?? '', /pip install argus-lsp/);
    });

    it('uses argus.interpreter with the server module', async () => {
        const py = '/venv/bin/python';
        const r = await resolveServerCommand(inputs({ interpreter: py, exe: [py], withArgus: [py] }));
        assert.deepEqual(r.server, { command: py, args: ['-P', '-m', SERVER_MODULE], source: 'argus.interpreter' });
        assert.equal(SAFE_PATH_FLAG, '-P');
        assert.equal(SERVER_MODULE, 'argus_lsp.server');
    });

    it('tells how to install into an interpreter that lacks the package', async () => {
        const py = '/venv/bin/python';
        const r = await resolveServerCommand(inputs({ interpreter: py, exe: [py], onPath: '/bin/argus' }));
        assert.equal(r.server, undefined);
        assert.match(r.problem ?? '', /\/venv\/bin\/python -m pip install argus-lsp/);
    });

    it('then tries the Python extension interpreter', async () => {
        const py = '/proj/.venv/bin/python';
        const r = await resolveServerCommand(
            inputs({ pythonExtensionInterpreter: async () => py, exe: [py], withArgus: [py], onPath: '/bin/argus' }),
        );
        assert.equal(r.server?.source, 'python-extension');
        assert.equal(r.server?.command, py);
        assert.deepEqual(r.server?.args, ['-P', '-m', SERVER_MODULE]);
    });

    it('falls through to PATH when the Python extension interpreter lacks argus', async () => {
        const py = '/usr/bin/python3';
        const r = await resolveServerCommand(inputs({ pythonExtensionInterpreter: async () => py, exe: [py], onPath: '/bin/argus' }));
        assert.deepEqual(r.server, { command: '/bin/argus', args: ['serve'], source: 'PATH' });
        assert.ok(r.tried.some((t) => t.includes('no argus_lsp')));
    });

    it('survives a Python extension that throws', async () => {
        const r = await resolveServerCommand(
            inputs({
                pythonExtensionInterpreter: async () => {
                    throw new Error('boom');
                },
                onPath: '/bin/argus',
            }),
        );
        assert.equal(r.server?.source, 'PATH');
    });

    it('never asks the Python extension in an untrusted workspace', async () => {
        let asked = false;
        const r = await resolveServerCommand(
            inputs({
                trusted: false,
                pythonExtensionInterpreter: async () => {
                    asked = true;
                    return '/proj/.venv/bin/python';
                },
                onPath: '/bin/argus',
            }),
        );
        assert.equal(asked, false);
        assert.equal(r.server?.source, 'PATH');
    });

    it('gives one problem with the fix when nothing is found', async () => {
        const r = await resolveServerCommand(inputs({}));
        assert.equal(r.server, undefined);
        assert.match(r.problem ?? '', /not found.*pip install argus-lsp.*argus\.path.*argus\.interpreter/s);
        assert.equal(r.tried.length, 2);
    });

    it('ignores whitespace-only settings', async () => {
        const r = await resolveServerCommand(inputs({ path: '  ', interpreter: ' ', onPath: '/bin/argus' }));
        assert.equal(r.server?.source, 'PATH');
    });
});

describe('launchSpec', () => {
    it('runs every kind of server in the safe directory, never the workspace', () => {
        const sources = [
            { command: '/opt/argus', args: ['serve'], source: 'argus.path' as const },
            { command: '/venv/bin/python', args: ['-P', '-m', SERVER_MODULE], source: 'argus.interpreter' as const },
            { command: '/proj/.venv/bin/python', args: ['-P', '-m', SERVER_MODULE], source: 'python-extension' as const },
            { command: '/bin/argus', args: ['serve'], source: 'PATH' as const },
        ];
        for (const server of sources) {
            const spec = launchSpec(server, '/home/u/.vscode/globalStorage/argus-dev.argus');
            assert.deepEqual(spec, { command: server.command, args: server.args, cwd: '/home/u/.vscode/globalStorage/argus-dev.argus' });
            spec.args.push('mutated');
            assert.notEqual(server.args.at(-1), 'mutated');
        }
    });
});

describe('expandHome', () => {
    it('expands a leading ~ only', () => {
        assert.equal(expandHome('~/x/argus', '/home/u'), '/home/u/x/argus');
        assert.equal(expandHome('/a/~/b', '/home/u'), '/a/~/b');
        assert.equal(expandHome('~', '/home/u'), '/home/u');
    });
});
