// A scripted executor for queue and worker tests (the executor is the worker's injected dependency;
// end-to-end tests use the real one). It honours the abort signal like the real executor does.
import { RunError } from '../../src/agent/run-error.ts';
import type { RunEvent, RunExecutor, RunInput, RunResult } from '../../src/jobs/worker.ts';

export interface Call {
  input: RunInput;
  startedAt: number;
  /** Resolves the run (when the step waits for it). */
  release(): void;
}

export type Step = (input: RunInput, call: Call) => Promise<Partial<RunResult> | undefined>;

export interface FakeExecutor extends RunExecutor {
  calls: Call[];
  /** Calls whose signal was aborted. */
  aborted: string[];
  /** Prompts in the order runs started. */
  prompts(): string[];
}

/** Runs `step` for every call (default: emit one assistant message and complete). */
export function fakeExecutor(step?: Step): FakeExecutor {
  const calls: Call[] = [];
  const aborted: string[] = [];
  return {
    calls,
    aborted,
    prompts: () => calls.map((c) => c.input.prompt),
    async execute(input) {
      let release!: () => void;
      const released = new Promise<void>((r) => {
        release = r;
      });
      const call: Call = { input, startedAt: Date.now(), release };
      calls.push(call);
      input.signal.addEventListener('abort', () => {
        aborted.push(input.jobId);
        release();
      });
      const s: Step =
        step ??
        (async (i) => {
          await i.onEvent({ type: 'assistant_message', data: { text: `done: ${i.prompt}` } });
          return undefined;
        });
      const out = await s(input, Object.assign(call, { released }));
      if (input.signal.aborted) throw new RunError('aborted', 'The run was aborted');
      return {
        messages: [
          { role: 'user', content: input.prompt },
          { role: 'assistant', content: `done: ${input.prompt}` },
        ],
        summary: 'done',
        prLink: null,
        commitSha: null,
        usage: { inputTokens: 10, outputTokens: 5 },
        ...out,
      };
    },
  };
}

/** A step that emits an event and then waits until released (or aborted). */
export function waitingStep(events: RunEvent[] = [{ type: 'assistant_message', data: { text: 'working' } }]): Step {
  return async (input, call) => {
    for (const e of events) await input.onEvent(e);
    await (call as Call & { released: Promise<void> }).released;
    return undefined;
  };
}
