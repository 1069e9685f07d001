import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_SETTINGS, LIVE_KEYS, RESTART_KEYS, toServerSettings } from '../../src/settings';

const from = (o: Record<string, unknown>) => toServerSettings((k) => o[k]);

describe('toServerSettings', () => {
    it('maps defaults to "every rule, on type"', () => {
        assert.deepEqual(from({ select: [], ignore: [], severityOverrides: {}, run: 'onType' }), DEFAULT_SETTINGS);
        assert.deepEqual(from({}), DEFAULT_SETTINGS);
    });

    it('uses the server names: severityOverrides becomes severity, empty select becomes null', () => {
        const s = from({ select: ['mb', ' DF002 '], ignore: ['MB004'], severityOverrides: { mb004: 'Hint', DF: 'off' }, run: 'onSave' });
        assert.deepEqual(s, { select: ['MB', 'DF002'], ignore: ['MB004'], severity: { MB004: 'hint', DF: 'off' }, run: 'onSave' });
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
});
