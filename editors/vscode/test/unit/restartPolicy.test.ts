import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RestartPolicy } from '../../src/restartPolicy';

describe('RestartPolicy', () => {
    it('allows a few restarts, then stops the crash loop', () => {
        let t = 0;
        const p = new RestartPolicy(3, 1000, () => t);
        assert.deepEqual([p.shouldRestart(), p.shouldRestart(), p.shouldRestart(), p.shouldRestart()], [true, true, true, false]);
        t = 5000; // crashes long ago no longer count
        assert.equal(p.shouldRestart(), true);
    });
    it('a manual restart re-arms it', () => {
        const p = new RestartPolicy(1, 1000, () => 0);
        p.shouldRestart();
        assert.equal(p.shouldRestart(), false);
        p.reset();
        assert.equal(p.shouldRestart(), true);
    });
});
