import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
    DEFAULT_RECORD_COMMAND,
    RECORD_SERVER_COMMAND,
    RECORD_UI_COMMAND,
    describeOutcome,
    recordArguments,
    validateCommandLine,
} from '../../src/recordCommand';
import { TRUSTED_ONLY_COMMANDS } from '../../src/settings';

describe('Record launches: the command line', () => {
    it('accepts what the server can split like a POSIX shell', () => {
        for (const ok of [DEFAULT_RECORD_COMMAND, 'pytest -k "add and not slow"', "python -m pytest 'tests/a b'", "it\\'s", 'a "b\\" c"']) {
            assert.equal(validateCommandLine(ok), undefined, ok);
        }
    });

    it('refuses empty lines, unclosed quotes and a trailing backslash, saying why', () => {
        assert.match(validateCommandLine('   ') ?? '', /pytest/);
        assert.match(validateCommandLine('pytest -k "add') ?? '', /Unclosed " quote/);
        assert.match(validateCommandLine("pytest 'a") ?? '', /Unclosed ' quote/);
        // inside '...' a backslash is literal, as in a shell: this quote is closed
        assert.equal(validateCommandLine("pytest 'a\\'"), undefined);
        assert.match(validateCommandLine('pytest \\') ?? '', /backslash/);
    });

    it('sends the trimmed line as the server command argument', () => {
        assert.deepEqual(recordArguments('  pytest -x tests '), { command: 'pytest -x tests' });
    });

    it('names only the outcomes the server does not announce itself', () => {
        assert.match(describeOutcome({ status: 'cancelled' }) ?? '', /cancelled/);
        assert.match(describeOutcome({ status: 'running' }) ?? '', /already running/);
        for (const quiet of [{ status: 'ok' }, { status: 'error' }, { status: 'timeout' }, undefined, 'ok']) {
            assert.equal(describeOutcome(quiet), undefined);
        }
    });
});

describe('Record launches: package.json', () => {
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '../../../package.json'), 'utf8'));
    const commands: { command: string; enablement?: string }[] = manifest.contributes.commands;
    const palette: { command: string; when: string }[] = manifest.contributes.menus.commandPalette;

    it('offers the palette command only in a trusted workspace', () => {
        const ui = commands.find((c) => c.command === RECORD_UI_COMMAND);
        assert.ok(ui, 'declared');
        assert.equal(ui.enablement, 'isWorkspaceTrusted');
        assert.ok(palette.some((m) => m.command === RECORD_UI_COMMAND && m.when === 'isWorkspaceTrusted'));
    });

    it('treats the server command as one that runs workspace code', () => {
        assert.ok(TRUSTED_ONLY_COMMANDS.includes(RECORD_SERVER_COMMAND));
        assert.ok(TRUSTED_ONLY_COMMANDS.includes(`${RECORD_SERVER_COMMAND}.cancel`));
    });

    it('declares the launch-file setting with an empty default (the server picks .argus/launches.json)', () => {
        const prop = manifest.contributes.configuration.properties['argus.launches'];
        assert.equal(prop.type, 'string');
        assert.equal(prop.default, '');
    });
});
