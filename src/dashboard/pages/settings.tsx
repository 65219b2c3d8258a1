// Settings: the project (shown; changed with `inkwell project set`), its keys and its webhook.
import { KeysSection } from '../components/keys-section.tsx';
import { WebhookSection } from '../components/webhook-section.tsx';
import { useSession } from '../session.ts';

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
