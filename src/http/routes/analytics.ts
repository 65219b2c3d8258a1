// Analytics endpoints (/v1/analytics/…, /v1/collect, /script.js). Filled in by the analytics work.
import type { App } from '../app.ts';
import type { AppContext } from '../context.ts';

export async function analyticsRoutes(_app: App, _ctx: AppContext): Promise<void> {}
