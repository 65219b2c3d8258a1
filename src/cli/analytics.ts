// `inkwell analytics …` commands. Filled in by the analytics work.
import type { Command } from 'commander';

export function registerAnalyticsCommands(_program: Command): void {}
