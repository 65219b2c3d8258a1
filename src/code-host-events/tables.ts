// Deliveries received from code hosts (GitHub, GitLab): one row per delivery id, so that a redelivery acts
// once, and the record of what each one did. Times are epoch milliseconds.
export interface CodeHostEventTables {
  code_host_deliveries: {
    project_id: string;
    host: 'github' | 'gitlab';
    /** X-GitHub-Delivery / GitLab's Idempotency-Key (or, from GitLab before 17.4, the body's SHA-256). */
    delivery_id: string;
    event: string;
    received_at: number;
    /** processing (being acted on), job_started, message_queued, job_archived, or ignored. */
    outcome: string;
    job_id: string | null;
    /** Why it was ignored. */
    reason: string | null;
  };
  /** The thread a job answers in when a turn ends: where the comment that started or last continued it was. */
  code_host_threads: {
    job_id: string;
    host: 'github' | 'gitlab';
    /** GitHub: the owner; GitLab: the namespace. */
    owner: string;
    repo: string;
    /** issue | pull (a pull or merge request). */
    kind: string;
    number: number;
    updated_at: number;
  };
}
