// Starts the background job worker for `inkwell serve --role all|worker`. Filled in by the jobs work.
import type { AppContext } from '../http/context.ts';

export interface Stoppable {
  stop(): Promise<void>;
}

export async function startWorker(_ctx: AppContext): Promise<Stoppable> {
  return { stop: async () => {} };
}
