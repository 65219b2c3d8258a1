// Entry point of `npm run eval` (see docs/evaluation.md).
import { main } from './lib/cli.ts';

process.exitCode = await main(process.argv.slice(2));
