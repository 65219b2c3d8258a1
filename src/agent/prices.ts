// What a model's tokens cost: a small table of list prices (USD per million input / output tokens) for the models
// Inkwell defaults to and their neighbours, overridden and extended by INKWELL_MODEL_PRICES. Pure.
// Cached input is priced as ordinary input: a spend figure never understates what was spent.

export interface ModelPrice {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
}

export const DEFAULT_MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  'anthropic/claude-sonnet-4-5': { input: 3, output: 15 },
  'anthropic/claude-sonnet-4-0': { input: 3, output: 15 },
  'anthropic/claude-opus-4-1': { input: 15, output: 75 },
  'anthropic/claude-haiku-4-5': { input: 1, output: 5 },
  'openai/gpt-5': { input: 1.25, output: 10 },
  'openai/gpt-5-mini': { input: 0.25, output: 2 },
  'openai/gpt-4.1': { input: 2, output: 8 },
  'openai/gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'openai/gpt-4o': { input: 2.5, output: 10 },
  'openai/gpt-4o-mini': { input: 0.15, output: 0.6 },
};

/** The price of `model` (`<provider>/<model>`): the configured one, else the built-in one, else null (unknown). */
export function priceOf(model: string, configured: Readonly<Record<string, ModelPrice>> = {}): ModelPrice | null {
  return configured[model] ?? DEFAULT_MODEL_PRICES[model] ?? null;
}

/** The cost in USD of the tokens at `price`; null when the price is unknown. */
export function costOf(usage: { inputTokens: number; outputTokens: number }, price: ModelPrice | null): number | null {
  if (!price) return null;
  return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1_000_000;
}

/**
 * Reads INKWELL_MODEL_PRICES: a JSON object from model ids to `{input, output}` prices. Throws an Error whose
 * message says what is wrong (the config names the variable).
 */
export function parseModelPrices(text: string): Record<string, ModelPrice> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('must be a JSON object like {"openai-compatible/llama3": {"input": 0.2, "output": 0.6}} (USD per million tokens)');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('must be a JSON object from model ids to {"input": N, "output": N}');
  const out: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(value)) {
    if (!/^[a-z][a-z0-9-]*\/\S+$/.test(model)) throw new Error(`has a key ${JSON.stringify(model)} that is not a model id like anthropic/claude-sonnet-4-5`);
    const p = price as Partial<ModelPrice> | null;
    const keys = typeof p === 'object' && p !== null ? Object.keys(p) : [];
    const ok = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0;
    if (!p || keys.length !== 2 || !ok(p.input) || !ok(p.output)) {
      throw new Error(`gives ${JSON.stringify(model)} ${JSON.stringify(price)}; a price is {"input": N, "output": N} with N ≥ 0 USD per million tokens`);
    }
    out[model] = { input: p.input as number, output: p.output as number };
  }
  return out;
}
