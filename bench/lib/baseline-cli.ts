// The command line both baseline scripts share: generate (or reuse) the dataset, measure, print the figures.
import { genArgs, intArg, parseArgs } from './args.ts';
import { type DatasetMeta, ensureDataset, genOptions } from './dataset.ts';
import type { ExportMeasurement, MeasureOptions } from './harness.ts';

export async function runBaselineCli(argv: string[], run: (csv: string, meta: DatasetMeta, o: MeasureOptions) => Promise<ExportMeasurement>): Promise<void> {
  const args = parseArgs(argv);
  const { meta, csv } = ensureDataset(genOptions(genArgs(args)), console.log);
  const naive = args.get('naive-pages') ?? '5';
  const m = await run(csv, meta, {
    runs: intArg(args, 'runs') ?? 5,
    warmups: 1,
    naivePages: naive === 'all' ? 'all' : Number(naive),
    skipNaive: args.has('no-naive'),
    log: console.log,
  });
  const { answer: _answer, ...printed } = m;
  console.log(JSON.stringify(printed, null, 2));
}
