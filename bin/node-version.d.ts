export const MIN_NODE: [number, number];
export function nodeVersionProblem(version: string): string | null;
