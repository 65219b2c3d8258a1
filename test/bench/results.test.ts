// The benchmark result writer: one <name>-latest.json per benchmark, overwritten, and one history line per run;
// and the history summary of every benchmark's committed latest result.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RESULTS_DIR } from '../../bench/lib/dataset.ts';
import { historyLine, readHistory } from '../../bench/lib/history.ts';
import { HISTORY_FILE, writeResults } from '../../bench/lib/results.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tmpDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-bench-results-'));
  dirs.push(d);
  return d;
}

const env = (date: string, commit: string) => ({ date, commit, srcDirty: false, cpus: 2, cpuModel: 'Test CPU', loadAverage: [1.5, 1, 1] });

function apiResult(date: string, commit: string, sqliteRps: number) {
  return {
    benchmark: 'api',
    environment: env(date, commit),
    method: { connections: 10, durationS: 10, rounds: 2, notes: ['not a figure'] },
    bare: { requestsPerSecond: 20_000, p99Ms: 1, cpuUsPerRequest: 50, rounds: [{ requestsPerSecond: 20_000 }] },
    inkwell: [
      { backend: 'sqlite', requestsPerSecond: sqliteRps, p99Ms: 2, ratioToBare: sqliteRps / 20_000, cpuUsPerRequest: 60, pgCpuUsPerRequest: null },
      { backend: 'postgres', requestsPerSecond: 9_000, p99Ms: 3, ratioToBare: 0.45, cpuUsPerRequest: 90, pgCpuUsPerRequest: 12 },
    ],
  };
}

describe('writeResults', () => {
  it('overwrites <name>-latest.json and appends one history line per run, adding no other file', () => {
    const dir = tmpDir();
    const first = writeResults('api', apiResult('2026-11-25T10:00:00.000Z', 'aaaaaaa', 10_000), dir);
    writeResults('api', apiResult('2026-11-25T11:00:00.000Z', 'bbbbbbb', 12_000), dir);

    expect(fs.readdirSync(dir).sort()).toEqual(['api-latest.json', HISTORY_FILE]);
    expect(first.latest).toBe(path.join(dir, 'api-latest.json'));
    expect(JSON.parse(fs.readFileSync(first.latest, 'utf8')).environment.commit).toBe('bbbbbbb');

    const lines = readHistory(fs.readFileSync(first.history, 'utf8'));
    expect(lines.map((l) => [l.bench, l.date, l.commit])).toEqual([
      ['api', '2026-11-25T10:00:00.000Z', 'aaaaaaa'],
      ['api', '2026-11-25T11:00:00.000Z', 'bbbbbbb'],
    ]);
    const last = lines[1]!;
    expect(last.inkwell.sqlite).toEqual({ requestsPerSecond: 12_000, ratioToBare: 0.6, p99Ms: 2, cpuUsPerRequest: 60 });
    expect(last.inkwell.postgres?.pgCpuUsPerRequest).toBe(12);
    expect(last.baseline).toEqual({ bare: { requestsPerSecond: 20_000, p99Ms: 1, cpuUsPerRequest: 50 } });
    expect(last.method).toEqual({ connections: 10, durationS: 10, rounds: 2 });
    expect([last.cpus, last.cpuModel, last.load1, last.srcDirty]).toEqual([2, 'Test CPU', 1.5, false]);
  });

  it('refuses a benchmark it cannot summarise before writing anything', () => {
    const dir = tmpDir();
    expect(() => writeResults('nosuch', { environment: env('2026-11-25T10:00:00.000Z', 'aaaaaaa') }, dir)).toThrow(/no history summary for benchmark "nosuch"/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe('historyLine', () => {
  it('keys the systems of another checkout run in the same rounds by backend@commit', () => {
    const line = historyLine('ingest', {
      environment: env('2026-11-25T10:00:00.000Z', 'bbbbbbb'),
      dataset: { name: 'events-x' },
      compare: { commit: 'aaaaaaa' },
      method: { rounds: 6 },
      bare: { eventsPerSecond: 400_000 },
      inkwell: [
        { backend: 'sqlite', eventsPerSecond: 60_000, ratioToBare: 0.15, p99Ms: 100, cpuUsPerEvent: 21, import: { eventsPerSecond: 30_000 } },
        { backend: 'sqlite', commit: 'aaaaaaa', eventsPerSecond: 50_000, ratioToBare: 0.125, p99Ms: 120, cpuUsPerEvent: 24 },
      ],
    });
    expect(Object.keys(line.inkwell)).toEqual(['sqlite', 'sqlite@aaaaaaa']);
    expect(line.inkwell.sqlite?.importEventsPerSecond).toBe(30_000);
    expect(line.inkwell['sqlite@aaaaaaa']?.eventsPerSecond).toBe(50_000);
    expect(line.method).toEqual({ rounds: 6, dataset: 'events-x', compare: 'aaaaaaa' });
    expect(line.baseline.bare?.eventsPerSecond).toBe(400_000);
  });

  it("keys bench:scale's --compare exports by backend@commit", () => {
    const exports = (w30: number, w365: number) => ({
      '30d': { warmMs: w30, firstAfterRestartMs: 2 * w30 },
      '365d': { warmMs: w365, firstAfterRestartMs: 2 * w365 },
    });
    const line = historyLine('scale', {
      environment: env('2026-11-27T00:00:00.000Z', 'bbbbbbb'),
      inkwell: [
        {
          backend: 'sqlite',
          exports: exports(100, 900),
          peakRssMbExport: 300,
          compare: { commit: 'aaaaaaa', exports: exports(110, 1200), peakRssMbExport: 340 },
        },
      ],
      baselines: { duckdb: {}, pgRaw: {} },
    });
    expect(Object.keys(line.inkwell)).toEqual(['sqlite', 'sqlite@aaaaaaa']);
    expect(line.inkwell['sqlite@aaaaaaa']).toEqual({
      export30dWarmMs: 110,
      export30dFirstMs: 220,
      export365dWarmMs: 1200,
      export365dFirstMs: 2400,
      peakRssMbExport: 340,
    });
    expect(line.inkwell.sqlite?.export365dWarmMs).toBe(900);
  });

  it('puts node -e alone as the CLI start-up baseline', () => {
    const line = historyLine('cli-startup', {
      environment: env('2026-11-25T10:00:00.000Z', 'aaaaaaa'),
      results: [
        { command: "node -e ''", medianMs: 40, overNodeMs: 0 },
        { command: 'inkwell --help', medianMs: 120, overNodeMs: 80 },
      ],
    });
    expect(line.baseline).toEqual({ "node -e ''": { medianMs: 40 } });
    expect(line.inkwell).toEqual({ 'inkwell --help': { medianMs: 120, overNodeMs: 80 } });
  });

  // `bench:import --profile` writes a CPU profile summary, not rounds of figures: it has no history line.
  const NO_HISTORY = new Set(['import-profile-latest.json']);
  const latestFiles = fs.readdirSync(RESULTS_DIR).filter((f) => f.endsWith('-latest.json') && !NO_HISTORY.has(f));
  it.each(latestFiles)('summarises the committed %s', (file) => {
    const name = file.slice(0, -'-latest.json'.length);
    const result = JSON.parse(fs.readFileSync(path.join(RESULTS_DIR, file), 'utf8'));
    const line = historyLine(name, result);
    expect([line.bench, line.date, line.commit]).toEqual([name, result.environment.date, result.environment.commit]);
    const systems = Object.values(line.inkwell);
    expect(systems.length).toBeGreaterThan(0);
    for (const figures of systems) expect(Object.values(figures).some((v) => typeof v === 'number')).toBe(true);
    if (name !== 'views' && name !== 'views-visitors') expect(Object.keys(line.baseline).length).toBeGreaterThan(0);
  });

  it('reads every line of the committed history', () => {
    const lines = readHistory(fs.readFileSync(path.join(RESULTS_DIR, HISTORY_FILE), 'utf8'));
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) {
      expect(typeof l.bench).toBe('string');
      expect(Object.keys(l.inkwell).length).toBeGreaterThan(0);
    }
  });
});
