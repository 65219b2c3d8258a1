// Builds dist/ (bin/build.js) once before the tests run: tests that start `node bin/inkwell.js` then run the
// code under test, not whatever an earlier build left there.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

export default function setup(): void {
  execFileSync(process.execPath, [path.resolve(import.meta.dirname, '../../bin/build.js'), '--quiet'], { stdio: 'inherit' });
}
