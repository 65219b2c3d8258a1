// `inkwell job …` commands. Filled in by the job work.
import type { Command } from 'commander';

export function registerJobCommands(_program: Command): void {}
