// Budgets and prices (pure): which budget a turn reached and how it is named, how the layers resolve, what
// tokens cost, and INKWELL_MODEL_PRICES / budget variables read from the environment.
import { describe, expect, it } from 'vitest';
import { exhaustedBudget, type RunBudget, resolveBudget } from '../../src/agent/budget.ts';
import { costOf, parseModelPrices, priceOf } from '../../src/agent/prices.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

const none = { steps: 0, inputTokens: 0, outputTokens: 0, elapsedMs: 0 };
const budget = (limits: RunBudget['limits'], extra: Partial<RunBudget> = {}): RunBudget => ({ limits, before: { inputTokens: 0, outputTokens: 0 }, ...extra });

describe('exhaustedBudget', () => {
  it('names the first budget reached (used ≥ limit), counting the job before this turn', () => {
    expect(exhaustedBudget(budget({ maxOutputTokens: 20_000 }), { ...none, outputTokens: 19_999 })).toBeNull();
    expect(exhaustedBudget(budget({ maxOutputTokens: 20_000 }), { ...none, outputTokens: 20_000 })).toBe('output tokens: 20,000 of 20,000 used');
    const b = budget({ maxInputTokens: 1000 }, { before: { inputTokens: 900, outputTokens: 0 } });
    expect(exhaustedBudget(b, { ...none, inputTokens: 150 })).toBe('input tokens: 1,050 of 1,000 used');
    expect(exhaustedBudget(budget({ maxSteps: 3 }), { ...none, steps: 3 })).toBe('steps: 3 of 3 used');
  });

  it('wall time per turn is read from the clock given (no timer involved)', () => {
    expect(exhaustedBudget(budget({ maxTurnMs: 60_000 }), { ...none, elapsedMs: 59_999 })).toBeNull();
    expect(exhaustedBudget(budget({ maxTurnMs: 60_000 }), { ...none, elapsedMs: 61_234 })).toBe('wall time per turn: 61.2 s of 60 s used');
  });

  it('spend is checked only when the cost is known', () => {
    const b = budget({ maxCostUsd: 1 }, { before: { inputTokens: 0, outputTokens: 0, costUsd: 0.75 } });
    expect(exhaustedBudget(b, { ...none, costUsd: 0.25 })).toBe('spend: $1.00 of $1.00 used');
    expect(exhaustedBudget(b, { ...none, costUsd: 0.2 })).toBeNull();
    expect(exhaustedBudget(b, none)).toBeNull();
  });

  it("the project's daily budget counts what its jobs used today plus this turn", () => {
    const b = budget({}, { daily: { limit: 1000, used: 990 } });
    expect(exhaustedBudget(b, { ...none, inputTokens: 5, outputTokens: 4 })).toBeNull();
    expect(exhaustedBudget(b, { ...none, inputTokens: 5, outputTokens: 5 })).toBe('project daily tokens: 1,000 of 1,000 used today (UTC)');
  });
});

describe('resolveBudget', () => {
  it('takes each field from the first layer that sets it', () => {
    expect(resolveBudget({ maxSteps: 5 }, { maxSteps: 9, maxOutputTokens: 100 }, { maxOutputTokens: 50, maxTurnMs: 1000, maxInputTokens: undefined })).toEqual({
      maxSteps: 5,
      maxOutputTokens: 100,
      maxTurnMs: 1000,
    });
    expect(resolveBudget(null, undefined, {})).toEqual({});
  });
});

describe('prices', () => {
  it('the built-in table knows the default model; configured prices win and add models', () => {
    expect(priceOf('anthropic/claude-sonnet-4-5')).toEqual({ input: 3, output: 15 });
    expect(priceOf('openai-compatible/llama3')).toBeNull();
    const configured = { 'anthropic/claude-sonnet-4-5': { input: 2, output: 10 }, 'openai-compatible/llama3': { input: 0, output: 0 } };
    expect(priceOf('anthropic/claude-sonnet-4-5', configured)).toEqual({ input: 2, output: 10 });
    expect(priceOf('openai-compatible/llama3', configured)).toEqual({ input: 0, output: 0 });
    expect(costOf({ inputTokens: 1_000_000, outputTokens: 200_000 }, { input: 3, output: 15 })).toBe(6);
    expect(costOf({ inputTokens: 1, outputTokens: 1 }, null)).toBeNull();
  });

  it('INKWELL_MODEL_PRICES is read as JSON and refused with a message naming the variable', () => {
    expect(loadConfig({ INKWELL_MODEL_PRICES: '{"openai-compatible/llama3":{"input":0.2,"output":0.6}}' }).model.prices).toEqual({
      'openai-compatible/llama3': { input: 0.2, output: 0.6 },
    });
    expect(loadConfig({}).model.prices).toEqual({});
    for (const bad of [
      '{',
      '[]',
      '{"llama3":{"input":1,"output":1}}',
      '{"a/b":{"input":-1,"output":1}}',
      '{"a/b":{"input":1}}',
      '{"a/b":{"input":1,"output":1,"cached":0}}',
    ]) {
      let err: unknown;
      try {
        loadConfig({ INKWELL_MODEL_PRICES: bad });
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe('INKWELL_MODEL_PRICES');
      expect((err as Error).message).toMatch(/^Invalid configuration: INKWELL_MODEL_PRICES /);
    }
    expect(parseModelPrices('{}')).toEqual({});
  });

  it('budget defaults come from the environment with their bounds', () => {
    const c = loadConfig({ INKWELL_MAX_OUTPUT_TOKENS: '20000', INKWELL_MAX_COST_USD: '2.5', INKWELL_PROJECT_DAILY_TOKENS: '1000000' });
    expect(c.budget).toEqual({
      maxInputTokens: undefined,
      maxOutputTokens: 20_000,
      maxTurnMs: undefined,
      maxCostUsd: 2.5,
      maxChangedFiles: 25,
      projectDailyTokens: 1_000_000,
    });
    expect(loadConfig({ INKWELL_MAX_CHANGED_FILES: '40' }).budget.maxChangedFiles).toBe(40);
    expect(() => loadConfig({ INKWELL_MAX_CHANGED_FILES: '0' })).toThrow(/INKWELL_MAX_CHANGED_FILES must be between 1 and/);
    expect(() => loadConfig({ INKWELL_MAX_COST_USD: 'two' })).toThrow(/INKWELL_MAX_COST_USD must be a number like 2.5/);
    expect(() => loadConfig({ INKWELL_MAX_TURN_MS: '0' })).toThrow(/INKWELL_MAX_TURN_MS must be between 1 and/);
  });
});
