// Qualifying page views (SPEC 4.3). Pure: no I/O.
import type { TrafficClass } from './classify.ts';
import { isStaticAsset } from './normalize.ts';

/**
 * A qualifying view: method GET (or absent), status 2xx or 304 (or absent), a page path (not a static
 * asset), class human or ai. `path` may be raw or normalised; query and fragment are ignored. HEAD,
 * POST and the rest do not qualify; neither do redirects (3xx other than 304) or errors.
 */
export function isQualifyingView(input: { method?: string | null; status?: number | null; path: string; class: TrafficClass }): boolean {
  return isQualifyingParts(input.method, input.status, input.class, () => isStaticAsset(input.path));
}

/**
 * isQualifyingView with the path reduced to whether it names a static asset (isStaticAsset of it), asked
 * only when the rest qualifies: callers that memoise per path pass their cached answer.
 */
export function isQualifyingParts(
  method: string | null | undefined,
  status: number | null | undefined,
  cls: TrafficClass,
  staticAsset: boolean | (() => boolean),
): boolean {
  if (cls !== 'human' && cls !== 'ai') return false;
  if (method !== undefined && method !== null && method !== 'GET' && method.trim().toUpperCase() !== 'GET') return false;
  if (status !== undefined && status !== null && !((status >= 200 && status <= 299) || status === 304)) return false;
  return !(typeof staticAsset === 'function' ? staticAsset() : staticAsset);
}
