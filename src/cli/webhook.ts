// `inkwell webhook …` commands. Filled in by the webhook work.
import type { Command } from 'commander';

export function registerWebhookCommands(_program: Command): void {}
