// Another worker process's turn of a job, for test/git/workspace.test.ts: prepares the job's workspace in the
// given data directory, writes a file into the worktree (the turn's work in progress) and exits.
//   node --import tsx test/git/turn-process.ts <dataDir> <repository> <branch> <jobId> <file>
import fs from 'node:fs';
import path from 'node:path';
import { testConfig } from '../../src/config.ts';
import { prepareWorkspace } from '../../src/git/workspace.ts';

const [dataDir, repository, branch, jobId, file] = process.argv.slice(2) as [string, string, string, string, string];
const ws = await prepareWorkspace(testConfig({ dataDir }), { repository, ref: 'main', branch, jobId });
fs.writeFileSync(path.join(ws.dir, file), `written by process ${process.pid}\n`);
process.stdout.write(`${ws.dir}\n`);
