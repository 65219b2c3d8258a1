// Agent job endpoints (/v2/agent/…). Filled in by the jobs work.
import type { App } from '../app.ts';
import type { AppContext } from '../context.ts';

export async function agentRoutes(_app: App, _ctx: AppContext): Promise<void> {}
