import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { hasArgusArgs, hasArgusPackage, isExecutable, which } from '../../src/probes';

describe('probes', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'argus-probe-'));
    const exe = path.join(dir, 'argus');
    writeFileSync(exe, '#!/bin/sh\nexit 0\n');
    chmodSync(exe, 0o755);
    const plain = path.join(dir, 'plain');
    writeFileSync(plain, '');
    chmodSync(plain, 0o644);

    it('isExecutable tells executables from plain files and directories', async () => {
        assert.equal(await isExecutable(exe), true);
        assert.equal(await isExecutable(dir), false);
        assert.equal(await isExecutable(path.join(dir, 'missing')), false);
        if (process.platform !== 'win32') assert.equal(await isExecutable(plain), false);
    });

    it('which searches the given PATH in order', async () => {
        assert.equal(await which('argus', ['/nonexistent', dir].join(path.delimiter)), exe);
        assert.equal(await which('plain', dir), process.platform === 'win32' ? plain : undefined);
    });

    it('hasArgusPackage is false for a Python without it and for a missing file', async () => {
        // A stand-in "python" that exits 3, as the real probe does when find_spec finds nothing.
        const fake = path.join(dir, 'fakepy');
        writeFileSync(fake, '#!/bin/sh\nexit 3\n');
        chmodSync(fake, 0o755);
        assert.equal(await hasArgusPackage(fake, dir), false);
        assert.equal(await hasArgusPackage(path.join(dir, 'missing'), dir), false);
        assert.equal(await hasArgusPackage(exe, dir), true);
    });

    it('hasArgusPackage is not fooled by an argus_lsp.py in its working directory', async (t) => {
        const python = ['/usr/bin/python3', '/usr/local/bin/python3'].find((p) => existsSync(p));
        if (!python) return t.skip('no python3');
        const version = execFileSync(python, ['-c', 'import sys; print(sys.version_info >= (3, 11))']).toString();
        if (!version.includes('True')) return t.skip('-P needs Python 3.11');
        // The system Python must not find a real argus_lsp elsewhere (a PYTHONPATH pointing at a checkout).
        const saved = process.env.PYTHONPATH;
        delete process.env.PYTHONPATH;
        t.after(() => {
            if (saved !== undefined) process.env.PYTHONPATH = saved;
        });
        const hostile = mkdtempSync(path.join(tmpdir(), 'argus-hostile-'));
        const marker = path.join(hostile, 'imported');
        writeFileSync(path.join(hostile, 'argus_lsp.py'), `open(${JSON.stringify(marker)}, "w").close()\n`);
        // Without -P, `-c` finds the workspace's file: the probe would answer "installed".
        const naive = execFileSync(python, ['-c', 'import importlib.util as u; print(bool(u.find_spec("argus_lsp")))'], {
            cwd: hostile,
        }).toString();
        assert.match(naive, /True/);
        assert.equal(await hasArgusPackage(python, hostile), false);
        assert.equal(existsSync(marker), false);
        assert.deepEqual(hasArgusArgs().slice(0, 2), ['-P', '-c']);
    });
});
