// When a turn of a job started or continued from a code-host comment ends, Inkwell answers in that thread: what
// the turn changed (the pull request, the commit, the first line of the agent's summary) or why it could not (the
// job's error). Marked as Inkwell's own reply, so it never triggers anything; a reply that cannot be posted is
// logged, never fatal (the outcome is stored already).
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { TurnEnded } from '../jobs/worker.ts';
import { inert } from '../lib/inert-text.ts';
import { publicBaseUrl } from '../lib/public-url.ts';
import { OWN_MARKER } from './mention.ts';
import type { DeliveriesStore, ThreadRow } from './store.ts';
import type { ThreadHost } from './thread-hosts.ts';

/** The job's page, linked from every reply. */
export function jobLink(config: Config, jobId: string): string {
  return `${publicBaseUrl(config)}/jobs/${jobId}`;
}

/** The reply to a turn's end. Pure. */
export function turnReply(ended: TurnEnded, link: string, host: ThreadRow['host']): string {
  const job = `job [\`${ended.jobId}\`](${link})`;
  const request = host === 'gitlab' ? 'merge request' : 'pull request';
  if (!ended.ok) return `Could not finish: ${job} failed with \`${ended.code}\`: ${inert(ended.message, 500)}`;
  const pr = ended.prLink ? ` ${request}: ${ended.prLink}` : '';
  const summary = inert(ended.summary) ? `\n\n> ${inert(ended.summary)}` : '';
  if (!ended.commitSha) return `Done: ${job} changed nothing this time.${pr ? ` The${pr}` : ''}${summary}`;
  return `Done: ${job} pushed \`${ended.commitSha.slice(0, 12)}\` to \`${inert(ended.branch)}\`;${pr || ' no pull request (the repository is local).'}${summary}`;
}

export interface TurnRepliesDeps {
  config: Config;
  logger: Logger;
  store: Pick<DeliveriesStore, 'threadOf'>;
  hosts: Record<ThreadRow['host'], ThreadHost>;
}

/** The worker's onTurnEnded: replies in the job's thread, if it has one. */
export function createTurnReplies(deps: TurnRepliesDeps): (ended: TurnEnded) => Promise<void> {
  return async (ended) => {
    const thread = await deps.store.threadOf(ended.jobId);
    if (!thread) return;
    const ref = { owner: thread.owner, repo: thread.repo, thread: { kind: thread.kind as 'issue' | 'pull', number: Number(thread.number) } };
    const body = `${OWN_MARKER}\n${turnReply(ended, jobLink(deps.config, ended.jobId), thread.host)}`;
    try {
      await deps.hosts[thread.host].reply(ref, body);
    } catch (err) {
      deps.logger.warn(
        { err, jobId: ended.jobId, host: thread.host, thread: `${thread.owner}/${thread.repo}#${thread.number}` },
        'could not reply in the code-host thread',
      );
    }
  };
}
