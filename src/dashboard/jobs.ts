// The agent jobs as the dashboard sees them: the API's types, their URLs, and how a job's facts are written.
import type { Ok } from './api.ts';

export type Job = Ok<'/v2/agent/{projectId}/job/{id}', 'get'>;
export type JobPage = Ok<'/v2/agent/{projectId}/jobs', 'get'>;
export type JobStatus = Job['status'];
export type JobDiff = Ok<'/v2/agent/{projectId}/job/{id}/diff', 'get'>;
export type JobEvent = Ok<'/v2/agent/{projectId}/job/{id}/events', 'get'>['events'][number];

export const JOB_STATUSES: JobStatus[] = ['active', 'completed', 'failed', 'archived'];

/** The API path of a project's job (and of what hangs under it: `/events`, `/diff`, …). */
export const jobApiPath = (projectId: string, jobId: string, tail = '') => `/v2/agent/${projectId}/job/${encodeURIComponent(jobId)}${tail}`;

/** The dashboard page of a job. */
export const jobPagePath = (jobId: string) => `/jobs/${encodeURIComponent(jobId)}`;

/** `2026-11-25 10:03 UTC` */
export const utc = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** Tokens in and out, and the cost when the server knows the model's price. */
export function usageText(usage: Job['usage']): string {
  const tokens = `${usage.inputTokens.toLocaleString('en-US')} in / ${usage.outputTokens.toLocaleString('en-US')} out tokens`;
  return usage.costUsd === undefined ? tokens : `${tokens}, $${usage.costUsd.toFixed(usage.costUsd < 1 ? 4 : 2)}`;
}
