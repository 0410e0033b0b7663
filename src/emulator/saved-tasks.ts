// Saved tasks are plain records keyed by name: BrowserAI reads them back by name, and a second
// saved task with the same name is refused rather than silently replacing the first.

import type { GeoLocation, Instruction } from '../contract/browserai-types';
import { objectId } from './object-id';

export interface StoredSavedTask {
  taskId: string;
  name: string;
  instructions: Instruction[];
  type: string;
  project: string;
  geoLocation: GeoLocation;
  cron_settings: string;
}

export type NewSavedTask = Omit<StoredSavedTask, 'taskId'>;

export class SavedTaskStore {
  private readonly byName = new Map<string, StoredSavedTask>();

  /** Undefined when the name is taken. The `taskId` is an ObjectId made at `now`, like every BrowserAI identifier. */
  create(input: NewSavedTask, now: number): StoredSavedTask | undefined {
    if (this.byName.has(input.name)) return undefined;
    const saved: StoredSavedTask = {
      taskId: objectId(now),
      name: input.name,
      instructions: input.instructions.map((instruction) => ({ action: instruction.action })),
      type: input.type,
      project: input.project,
      geoLocation: { ...input.geoLocation },
      cron_settings: input.cron_settings,
    };
    this.byName.set(saved.name, saved);
    return saved;
  }

  byNameOf(name: string): StoredSavedTask | undefined {
    return this.byName.get(name);
  }

  list(): StoredSavedTask[] {
    return [...this.byName.values()];
  }
}
