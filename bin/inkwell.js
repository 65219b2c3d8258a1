#!/usr/bin/env node
// Entry point for `npx inkwell …`: runs the TypeScript sources through tsx, so the CLI is always the
// checked-out code (no stale build output).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
