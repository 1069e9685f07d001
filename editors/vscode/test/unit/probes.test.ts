import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { hasArgusPackage, isExecutable, which } from '../../src/probes';

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
        assert.equal(await hasArgusPackage(fake), false);
        assert.equal(await hasArgusPackage(path.join(dir, 'missing')), false);
        assert.equal(await hasArgusPackage(exe), true);
    });
});
