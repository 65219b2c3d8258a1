#!/usr/bin/env node
// Entry point for `npx inkwell …` and `npm start`: runs the compiled code in dist/, which `npm install`,
// `npm start`, the test setup and `npm run build` (re)build from src/ (bin/build.js). Without dist/, or with
// INKWELL_FROM_SOURCE=1 (to try an edit without rebuilding), it runs the TypeScript sources through tsx:
// the same code, slower to start.
import fs from 'node:fs';
import module from 'node:module';
import { nodeVersionProblem } from './node-version.js';

const tooOld = nodeVersionProblem(process.versions.node);
if (tooOld) {
  process.stderr.write(`${tooOld}\n`);
  process.exit(1);
}

// V8's compiled code of each module, kept on disk by Node (in the temp directory; checked against the file's
// content): starts after the first skip most of the compiling.
module.enableCompileCache?.();

const compiled = new URL('../dist/main.js', import.meta.url);
if (process.env.INKWELL_FROM_SOURCE !== '1' && fs.existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
