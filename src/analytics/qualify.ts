// Qualifying page views (SPEC 4.3). Pure: no I/O.
import type { TrafficClass } from './classify.ts';
import { isStaticAsset } from './normalize.ts';

/**
 * A qualifying view: method GET (or absent), status 2xx or 304 (or absent), a page path (not a static
 * asset), class human or ai. `path` may be raw or normalised; query and fragment are ignored. HEAD,
 * POST and the rest do not qualify; neither do redirects (3xx other than 304) or errors.
 */
export function isQualifyingView(input: { method?: string | null; status?: number | null; path: string; class: TrafficClass }): boolean {
  if (input.class !== 'human' && input.class !== 'ai') return false;
  const method = input.method;
  if (method !== undefined && method !== null && method.trim().toUpperCase() !== 'GET') return false;
  const status = input.status;
  if (status !== undefined && status !== null && !((status >= 200 && status <= 299) || status === 304)) return false;
  if (isStaticAsset(input.path)) return false;
  return true;
}
