// `inkwell project set …`: project settings (visitor-id rotation), straight on the database.
import type { Command } from 'commander';
import { NotFoundError, type ProjectSettings } from '../projects/service.ts';
import { withContext } from './db.ts';
import { fail, printJson } from './output.ts';

const ROTATIONS = ['none', 'daily', 'monthly'] as const;

export function registerProjectSettingsCommands(program: Command): void {
  const project = program.commands.find((c) => c.name() === 'project') ?? program.command('project').description('Projects');
  project
    .command('set')
    .description('Change project settings')
    .requiredOption('--project <id>', 'project id')
    .option(
      '--visitor-id-rotation <rotation>',
      'none, daily or monthly: how often the keyed hash of IP + user agent that identifies visitors without a visitorId changes (a visitor seen on two days counts once per period)',
    )
    .option('--json', 'print one JSON object')
    .action(async (opts: { project: string; visitorIdRotation?: string; json?: boolean }) => {
      const patch: Partial<ProjectSettings> = {};
      if (opts.visitorIdRotation !== undefined) {
        if (!(ROTATIONS as readonly string[]).includes(opts.visitorIdRotation)) {
          fail(`--visitor-id-rotation must be one of ${ROTATIONS.join(', ')} (got ${JSON.stringify(opts.visitorIdRotation)})`);
        }
        patch.visitorIdRotation = opts.visitorIdRotation as (typeof ROTATIONS)[number];
      }
      if (Object.keys(patch).length === 0) fail('nothing to change: pass --visitor-id-rotation none|daily|monthly');
      const settings = await withContext((ctx) => ctx.projects.updateSettings(opts.project, patch)).catch((err: unknown) => {
        if (err instanceof NotFoundError) fail(err.message);
        throw err;
      });
      // Never print secrets that may sit in settings (webhook secret).
      const shown = { visitorIdRotation: settings.visitorIdRotation ?? 'none' };
      if (opts.json) printJson({ projectId: opts.project, settings: shown });
      else process.stdout.write(`Project ${opts.project}: visitor-id rotation ${shown.visitorIdRotation}\n`);
    });
}
