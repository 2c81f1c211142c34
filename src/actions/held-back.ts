/**
 * What a present receiver was not notified of, held in memory by message
 * until their last event queue expires (Zulip's missedmessage_hook, ADR
 * 0045): bounded per user and in users, the oldest forgotten first.
 */
export class HeldBack<T> {
  private readonly byUser = new Map<number, Map<number, T>>();

  constructor(
    private readonly perUser: number,
    private readonly users: number,
  ) {}

  hold(userId: number, messageId: number, item: T): void {
    let mine = this.byUser.get(userId);
    if (!mine) {
      if (this.byUser.size >= this.users) this.byUser.delete(this.byUser.keys().next().value!);
      this.byUser.set(userId, (mine = new Map()));
    }
    if (mine.size >= this.perUser) mine.delete(mine.keys().next().value!);
    mine.set(messageId, item);
  }

  /** The user's held items among `messageIds` (what their expired queue still held unpolled); the rest is forgotten. */
  take(userId: number, messageIds: readonly number[]): Array<[number, T]> {
    const mine = this.byUser.get(userId);
    if (!mine) return [];
    this.byUser.delete(userId);
    const out: Array<[number, T]> = [];
    for (const id of messageIds) {
      const item = mine.get(id);
      if (item !== undefined) out.push([id, item]);
    }
    return out;
  }

  clear(): void {
    this.byUser.clear();
  }
}
