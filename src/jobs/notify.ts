// In-process wake-ups between the API, the worker and live event streams that share one database
// handle. Across processes nothing is delivered here: the worker polls the queue, event streams poll
// the events table, and a running worker sees an archive on its next lease renewal.
import { EventEmitter } from 'node:events';

export class JobNotifier {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  /** A job has a new turn to run (created or messaged). */
  queued(jobId: string): void {
    this.emitter.emit('queued', jobId);
  }
  onQueued(fn: (jobId: string) => void): () => void {
    return this.on('queued', fn);
  }

  /** A job has new events. */
  event(jobId: string): void {
    this.emitter.emit(`event:${jobId}`);
  }
  onEvent(jobId: string, fn: () => void): () => void {
    return this.on(`event:${jobId}`, fn);
  }

  /** A job was archived: a run in progress must stop. */
  archived(jobId: string): void {
    this.emitter.emit(`archived:${jobId}`);
  }
  onArchived(jobId: string, fn: () => void): () => void {
    return this.on(`archived:${jobId}`, fn);
  }

  private on(name: string, fn: (...args: any[]) => void): () => void {
    this.emitter.on(name, fn);
    return () => this.emitter.off(name, fn);
  }
}

const notifiers = new WeakMap<object, JobNotifier>();

/** The notifier shared by everything in this process that uses `scope` (the Database handle). */
export function notifierFor(scope: object): JobNotifier {
  let n = notifiers.get(scope);
  if (!n) {
    n = new JobNotifier();
    notifiers.set(scope, n);
  }
  return n;
}
