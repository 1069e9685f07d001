import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
    DEFAULT_PROFILE,
    DEFAULT_SETTINGS,
    LIVE_KEYS,
    PROFILE_KEYS,
    RESTART_KEYS,
    TRUSTED_ONLY_COMMANDS,
    initializationOptions,
    toServerSettings,
} from '../../src/settings';

const from = (o: Record<string, unknown>) => toServerSettings((k) => o[k]);

describe('toServerSettings', () => {
    it('maps defaults to "every rule, on type"', () => {
        assert.deepEqual(from({ select: [], ignore: [], severityOverrides: {}, run: 'onType' }), DEFAULT_SETTINGS);
        assert.deepEqual(from({}), DEFAULT_SETTINGS);
    });

    it('uses the server names: severityOverrides becomes severity, empty select becomes null', () => {
        const s = from({ select: ['mb', ' DF002 '], ignore: ['MB004'], severityOverrides: { mb004: 'Hint', DF: 'off' }, run: 'onSave' });
        assert.deepEqual(s, {
            select: ['MB', 'DF002'],
            ignore: ['MB004'],
            severity: { MB004: 'hint', DF: 'off' },
            run: 'onSave',
            profile: DEFAULT_PROFILE,
            launches: null,
            debounceMs: 150,
            kernelTimeout: null,
            checkProcesses: 1,
            hoverWaitMs: 40,
        });
    });

    it('passes the scheduling settings, defaults for junk', () => {
        const s = from({ debounceMs: 0, kernelTimeout: 2.5, checkProcesses: 2 });
        assert.deepEqual([s.debounceMs, s.kernelTimeout, s.checkProcesses], [0, 2.5, 2]);
        assert.equal(from({ checkProcesses: 0 }).checkProcesses, 0);
        const junk = from({ debounceMs: -1, kernelTimeout: 0, checkProcesses: 7 });
        assert.deepEqual([junk.debounceMs, junk.kernelTimeout, junk.checkProcesses], [150, null, 1]);
        assert.equal(from({ kernelTimeout: null }).kernelTimeout, null);
        assert.equal(from({ debounceMs: '300' }).debounceMs, 150);
        assert.equal(from({ hoverWaitMs: 0 }).hoverWaitMs, 0);
        assert.equal(from({ hoverWaitMs: -5 }).hoverWaitMs, 40);
    });

    it('accepts a comma-separated string as the CLI does', () => {
        assert.deepEqual(from({ ignore: 'MB004, pf' }).ignore, ['MB004', 'PF']);
    });

    it('drops junk instead of sending it', () => {
        const s = from({ select: ['MB002', 3, '', 'not a code', 'MB002'], severityOverrides: { MB002: 'loud', '': 'error', X1: 'information' }, run: 'sometimes' });
        assert.deepEqual(s.select, ['MB002']);
        assert.deepEqual(s.severity, { X1: 'info' });
        assert.equal(s.run, 'onType');
    });

    it('ignores a non-object severity map', () => {
        assert.deepEqual(from({ severityOverrides: ['MB002'] }).severity, {});
        assert.deepEqual(from({ severityOverrides: null }).severity, {});
    });

    it('restarts only for the settings that change the command', () => {
        assert.deepEqual(RESTART_KEYS, ['argus.path', 'argus.interpreter']);
        for (const k of LIVE_KEYS) assert.ok(!RESTART_KEYS.includes(k));
    });

    it('follows live changes of the profile settings (argus.profile covers argus.profile.*)', () => {
        assert.ok(LIVE_KEYS.includes('argus.profile'));
        for (const k of PROFILE_KEYS) assert.ok(k.startsWith('argus.profile.') && !RESTART_KEYS.includes(k));
    });
});

describe('profile settings', () => {
    // VS Code's get('profile.target') reads the dotted key of the "argus" section.
    it('default to a local run with the server\'s interpreter, 600 s, no counters', () => {
        assert.deepEqual(from({}).profile, { target: 'local', python: null, timeout: 600, counters: false });
        assert.deepEqual(from({ 'profile.target': '', 'profile.python': '', 'profile.timeout': 600, 'profile.counters': false }).profile, DEFAULT_PROFILE);
    });

    it('nest under "profile" with the server\'s names (argus_lsp/settings.py _profile_keys)', () => {
        const s = from({
            'profile.target': ' ssh://me@gpu-box:2222 ',
            'profile.python': ' /opt/venv/bin/python ',
            'profile.timeout': 90,
            'profile.counters': true,
        });
        assert.deepEqual(s.profile, { target: 'ssh://me@gpu-box:2222', python: '/opt/venv/bin/python', timeout: 90, counters: true });
    });

    it('falls back to the defaults for values of the wrong type', () => {
        const s = from({ 'profile.target': 7, 'profile.python': false, 'profile.timeout': -1, 'profile.counters': 'yes' });
        assert.deepEqual(s.profile, DEFAULT_PROFILE);
        assert.equal(from({ 'profile.timeout': Number.NaN }).profile.timeout, 600);
        assert.equal(from({ 'profile.timeout': '30' }).profile.timeout, 600);
    });

    it('sends an unknown target as written, so the server reports it instead of profiling locally', () => {
        assert.equal(from({ 'profile.target': 'gpu-box' }).profile.target, 'gpu-box');
    });
});

describe('initializationOptions', () => {
    it('carries trust under "argus" with the settings, where the server reads it', () => {
        const s = from({ ignore: ['MB004'], 'profile.counters': true });
        assert.deepEqual(initializationOptions(s, false), { argus: { ...s, trusted: false } });
        assert.equal(initializationOptions(s, true).argus.trusted, true);
        assert.deepEqual(initializationOptions(s, true).argus.profile, { ...DEFAULT_PROFILE, counters: true });
    });
});

describe('package.json', () => {
    // Compiled to out/test/unit/, so the manifest is three levels up.
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '../../../package.json'), 'utf8'));
    const commands: { command: string; enablement?: string }[] = manifest.contributes.commands;
    const props: Record<string, { type: string; default: unknown }> = manifest.contributes.configuration.properties;

    it('disables the commands that run workspace code unless the workspace is trusted', () => {
        for (const id of TRUSTED_ONLY_COMMANDS) {
            const c = commands.find((x) => x.command === id);
            assert.ok(c, `${id} is declared`);
            assert.equal(c.enablement, 'isWorkspaceTrusted', id);
            // They take the lens's {uri, kernel} argument, so the palette does not offer them.
            assert.ok(manifest.contributes.menus.commandPalette.some((m: { command: string; when: string }) => m.command === id && m.when === 'false'));
        }
    });

    it('reads the settings that pick a program or a host from user settings only when untrusted', () => {
        const u = manifest.capabilities.untrustedWorkspaces;
        assert.equal(u.supported, 'limited');
        for (const k of ['argus.path', 'argus.interpreter', 'argus.profile.python', 'argus.profile.target']) {
            assert.ok(u.restrictedConfigurations.includes(k), k);
        }
    });

    it('declares the scheduling settings with the defaults the mapping assumes', () => {
        assert.equal(props['argus.debounceMs'].default, DEFAULT_SETTINGS.debounceMs);
        assert.equal(props['argus.kernelTimeout'].default, DEFAULT_SETTINGS.kernelTimeout);
        assert.equal(props['argus.checkProcesses'].default, DEFAULT_SETTINGS.checkProcesses);
        assert.equal(props['argus.hoverWaitMs'].default, DEFAULT_SETTINGS.hoverWaitMs);
    });

    it('declares the profile settings with the defaults the mapping assumes', () => {
        assert.deepEqual(PROFILE_KEYS.filter((k) => !(k in props)), []);
        assert.equal(props['argus.profile.target'].default, DEFAULT_PROFILE.target);
        assert.equal(props['argus.profile.python'].default, '');
        assert.equal(props['argus.profile.timeout'].default, DEFAULT_PROFILE.timeout);
        assert.equal(props['argus.profile.counters'].default, DEFAULT_PROFILE.counters);
        // Every declared argus.* setting is either mapped live, restarts the server or is the trace.
        for (const k of Object.keys(props)) {
            const handled = RESTART_KEYS.includes(k) || LIVE_KEYS.some((l) => k === l || k.startsWith(`${l}.`)) || k === 'argus.trace.server';
            assert.ok(handled, `${k} is neither live nor a restart key`);
        }
    });
});
