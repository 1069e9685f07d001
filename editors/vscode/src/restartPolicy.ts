// Caps automatic restarts of a crashing server, so a broken install gives one notification rather
// than a crash loop. The language client's own default is similar but silent about why it stopped;
// this keeps the window and the count explicit and testable.

export class RestartPolicy {
    private crashes: number[] = [];

    constructor(
        private readonly maxRestarts = 3,
        private readonly windowMs = 3 * 60 * 1000,
        private readonly now: () => number = Date.now,
    ) {}

    /** Record a crash; true if the server should be restarted again. */
    shouldRestart(): boolean {
        const t = this.now();
        this.crashes = this.crashes.filter((c) => t - c < this.windowMs);
        this.crashes.push(t);
        return this.crashes.length <= this.maxRestarts;
    }

    /** A manual restart (the command) starts a fresh budget. */
    reset(): void {
        this.crashes = [];
    }
}
