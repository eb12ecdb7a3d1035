// A counting semaphore: at most `slots` holders at once; acquire() waits (FIFO) for a release.
export class Semaphore {
  private readonly waiting: (() => void)[] = [];

  constructor(private slots: number) {}

  async acquire(): Promise<void> {
    if (this.slots > 0) {
      this.slots--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the slot to the longest waiter, or frees it. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.slots++;
  }
}
