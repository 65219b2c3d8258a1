// Settings: the project (shown; changed with `inkwell project set`), its keys and its webhook.

import type { Project } from '../api.ts';
import { KeysSection } from '../components/keys-section.tsx';
import { WebhookSection } from '../components/webhook-section.tsx';
import { useSession } from '../session.ts';

const BUDGET_LABELS: [keyof Project['settings']['budget'], string, (n: number) => string][] = [
  ['maxSteps', 'steps', String],
  ['maxInputTokens', 'input tokens', (n) => n.toLocaleString('en')],
  ['maxOutputTokens', 'output tokens', (n) => n.toLocaleString('en')],
  ['maxTurnMs', 'per turn', (n) => `${Math.round(n / 1000)} s`],
  ['maxCostUsd', 'spend', (n) => `$${n}`],
  ['dailyTokens', 'tokens a day', (n) => n.toLocaleString('en')],
];

/** The project's budget defaults in words; the server's defaults apply to what is absent. */
function budgetText(budget: Project['settings']['budget']): string {
  const set = BUDGET_LABELS.filter(([k]) => budget[k] !== undefined).map(([k, label, f]) => `${label} ${f(budget[k] as number)}`);
  return set.length === 0 ? "the server's defaults" : set.join(', ');
}

function ProjectFacts() {
  const { project } = useSession();
  return (
    <section aria-labelledby="project-title">
      <h2 id="project-title">Project</h2>
      <dl class="facts">
        <dt>Name</dt>
        <dd>{project.name}</dd>
        <dt>Id</dt>
        <dd>
          <code>{project.id}</code>
        </dd>
        <dt>Repository</dt>
        <dd>
          <code>{project.repository}</code> (branch <code>{project.ref}</code>)
        </dd>
        <dt>Model</dt>
        <dd>{project.model ?? 'the server default'}</dd>
        <dt>Visitor-id rotation</dt>
        <dd>{project.settings.visitorIdRotation}</dd>
        <dt>Other repositories jobs may use</dt>
        <dd>
          {project.settings.allowedRepositories.length === 0
            ? 'none'
            : project.settings.allowedRepositories.map((r, i) => (
                <>
                  {i > 0 && ', '}
                  <code>{r}</code>
                </>
              ))}
        </dd>
        <dt>Job budgets</dt>
        <dd>{budgetText(project.settings.budget)}</dd>
        <dt>Jobs from code-host comments</dt>
        <dd>{project.settings.codeHostHandle ? <code>@{project.settings.codeHostHandle}</code> : 'not set up'}</dd>
      </dl>
      <p class="muted">
        Change them with <code>npx inkwell project set --project {project.id} …</code> on the server.
      </p>
    </section>
  );
}

export function Settings() {
  return (
    <div class="settings">
      <h1>Settings</h1>
      <ProjectFacts />
      <KeysSection />
      <WebhookSection />
    </div>
  );
}
