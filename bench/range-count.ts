// The 365-day count's memory and CPU, whole against range by range (range-spill.ts), without a service: a
// generated year's day sets (bench/lib/dataset.ts events, qualifying ones, path ids and visitor ordinals numbered
// in first-seen order as the service does) replicated `--replicate` times over disjoint visitor ranges (5M × 20:
// the 100M year's ~83.6M pairs), each day encoded and decoded as a blob is, then counted by a window counter in two
// threads. Each round runs each variant in a child process of its own (peak RSS is per process), alternating.
//   npx tsx bench/range-count.ts [--events 5M] [--replicate 20] [--rounds 3] [--budget-mb 64] [--sets FILE]
// Prints per round and variant: peak RSS, ArrayBuffers at the load's end and at most while counting, the CPU of
// taking the blobs in (decoding them, or cutting them into the file), CPU (all threads) and wall time of the
// count, and a digest of the answer (the variants' must be equal).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWindowCounter } from '../src/analytics/export/count-threads.ts';
import { buildDaySetFromWords, type DaySet, decodeDaySet, encodeDaySet, FLAG_AI, FLAG_HUMAN, sharedArrays } from '../src/analytics/export/daysets.ts';
import { RangeSpill } from '../src/analytics/export/range-spill.ts';
import { intArg, parseArgs } from './lib/args.ts';
import { generateEvents, genOptions } from './lib/dataset.ts';

const args = parseArgs(process.argv.slice(2));
const events = intArg(args, 'events') ?? 5_000_000;
const replicate = intArg(args, 'replicate') ?? 20;
const rounds = intArg(args, 'rounds') ?? 3;
const budget = (intArg(args, 'budget-mb') ?? 64) * 1024 * 1024;
const setsFile = args.get('sets') ?? path.join(os.tmpdir(), `inkwell-range-count-sets-${events}.bin`);
const variant = args.get('variant');

/** Writes the generated year's day sets, encoded, to `file` (day, length, blob; little-endian). */
function generate(file: string): void {
  const o = genOptions({ events, days: 365 });
  const pathIds = new Map<string, number>();
  const ordinals = new Int32Array(o.visitors).fill(-1);
  let nextVisitor = 0;
  const start = Date.parse(`${o.startDay}T00:00:00.000Z`);
  let day = -1;
  let perPath = new Map<number, number[]>();
  const out: Buffer[] = [];
  const flush = () => {
    if (day < 0) return;
    const ids = [...perPath.keys()].sort((a, b) => a - b);
    const blob = encodeDaySet(
      buildDaySetFromWords(
        day,
        1,
        0,
        ids,
        ids.map((p) => Uint32Array.from(perPath.get(p) as number[])),
      ),
    );
    const head = Buffer.alloc(8);
    head.writeUInt32LE(day, 0);
    head.writeUInt32LE(blob.length, 4);
    out.push(head, Buffer.from(blob));
    perPath = new Map();
  };
  generateEvents(o, (e) => {
    const d = Math.floor((e.ts - start) / 86_400_000);
    if (d !== day) {
      flush();
      day = d;
    }
    if (!e.q) return;
    let p = pathIds.get(e.path);
    if (p === undefined) {
      p = pathIds.size;
      pathIds.set(e.path, p);
    }
    let v = ordinals[e.ordinal] as number;
    if (v < 0) {
      v = nextVisitor++;
      ordinals[e.ordinal] = v;
    }
    let l = perPath.get(p);
    if (!l) {
      l = [];
      perPath.set(p, l);
    }
    l.push(v * 4 + (e.cls === 'human' ? FLAG_HUMAN : FLAG_AI));
  });
  flush();
  fs.writeFileSync(file, Buffer.concat(out));
}

/** The day's set with every visitor repeated in `replicate` disjoint ranges `span` apart (same gaps, `replicate` times the pairs). */
function replicated(s: DaySet, span: number): DaySet {
  const a = sharedArrays(s.pathIds.length, s.pairs.length * replicate);
  a.pathIds.set(s.pathIds);
  let m = 0;
  for (let k = 0; k < s.pathIds.length; k++) {
    a.starts[k] = m;
    for (let r = 0; r < replicate; r++)
      for (let i = s.starts[k] as number; i < (s.starts[k + 1] as number); i++) a.pairs[m++] = (s.pairs[i] as number) + r * span * 4;
  }
  a.starts[s.pathIds.length] = m;
  return { ...s, ...a, maxVisitor: s.maxVisitor + (replicate - 1) * span };
}

async function child(name: string): Promise<void> {
  const file = fs.readFileSync(setsFile);
  const blobs: { day: number; data: Uint8Array }[] = [];
  for (let at = 0; at < file.length; ) {
    const n = file.readUInt32LE(at + 4);
    blobs.push({ day: file.readUInt32LE(at), data: new Uint8Array(file.buffer, file.byteOffset + at + 8, n) });
    at += 8 + n;
  }
  let span = 0;
  for (const b of blobs) span = Math.max(span, decodeDaySet(b.day, 1, b.data).maxVisitor + 1);
  const counter = createWindowCounter();
  counter.prepare();

  const spill = new RangeSpill(name === 'whole' ? Number.POSITIVE_INFINITY : budget);
  spill.expect(blobs.length);
  let pairs = 0;
  /** CPU of taking the decoded blobs in: decoding (whole) or cutting them into the file (ranges). */
  let addCpu = 0;
  for (const b of blobs) {
    // As a blob is read (encoded: the stored form): held whole, decoded into shared memory, or cut into ranges.
    const blob = encodeDaySet(replicated(decodeDaySet(b.day, 1, b.data), span));
    const c0 = process.cpuUsage();
    if (name === 'whole') {
      const set = decodeDaySet(b.day, 1, blob);
      pairs += set.pairs.length;
      spill.add(set, false);
    } else {
      spill.addEncoded(b.day, 1, blob);
      pairs = spill.pairs;
    }
    const c = process.cpuUsage(c0);
    addCpu += c.user + c.system;
  }

  const loaded = process.memoryUsage().arrayBuffers;
  let peakBuffers = loaded;
  const read = spill.read.bind(spill);
  spill.read = (r: number) => {
    const out = read(r);
    peakBuffers = Math.max(peakBuffers, process.memoryUsage().arrayBuffers);
    return out;
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const counts = await counter.countRanges(spill);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  peakBuffers = Math.max(peakBuffers, process.memoryUsage().arrayBuffers);
  const h = createHash('sha256').update(JSON.stringify(counts.totals));
  for (const a of [counts.pathIds, counts.human, counts.ai, counts.total]) h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  spill.close();
  await counter.close();
  console.log(
    JSON.stringify({
      variant: name,
      pairs,
      ranges: spill.ranges,
      spilledMB: Math.round(spill.spilled / 1e6),
      peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
      buffersLoadedMB: Math.round(loaded / 1e6),
      buffersPeakMB: Math.round(peakBuffers / 1e6),
      addCpuMs: Math.round(addCpu / 1000),
      countCpuMs: Math.round((cpu.user + cpu.system) / 1000),
      countWallMs: Math.round(wall),
      threaded: counter.stats.threaded,
      digest: h.digest('hex').slice(0, 16),
    }),
  );
}

if (variant) await child(variant);
else {
  if (!fs.existsSync(setsFile)) {
    console.log(`generating ${events} events' day sets into ${setsFile}`);
    generate(setsFile);
  }
  const self = fileURLToPath(import.meta.url);
  const tsx = path.join(path.dirname(self), '..', 'node_modules', 'tsx', 'dist', 'cli.mjs');
  console.log(
    `load ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}; ${replicate}x ${setsFile}; budget ${budget / 1048576} MiB`,
  );
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ['whole', 'ranges'] : ['ranges', 'whole'];
    for (const v of order) {
      const out = execFileSync(
        process.execPath,
        ['--expose-gc', tsx, self, '--variant', v, '--sets', setsFile, '--replicate', String(replicate), '--budget-mb', String(budget / 1048576)],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      );
      console.log(`round ${r + 1} ${out.trim()}`);
    }
  }
  console.log(
    `load ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
}
