// Every eval task, by kind. Add a task to the file of its kind (docs/evaluation.md says how).
import type { EvalTask } from '../lib/types.ts';
import { addPageTasks } from './add-page.ts';
import { documentFlagTasks } from './document-flag.ts';
import { fixLinksTasks } from './fix-links.ts';
import { followUpTasks } from './follow-up.ts';
import { refuseTasks } from './refuse.ts';
import { renamePageTasks } from './rename-page.ts';
import { styleRuleTasks } from './style-rule.ts';

export const ALL_TASKS: readonly EvalTask[] = [
  ...addPageTasks,
  ...documentFlagTasks,
  ...fixLinksTasks,
  ...renamePageTasks,
  ...styleRuleTasks,
  ...followUpTasks,
  ...refuseTasks,
];
