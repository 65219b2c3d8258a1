/** Request bodies are JSON: `application/json` and `application/<something>+json`, any parameters. */
export const JSON_CONTENT_TYPE = /^application\/([\w.-]+\+)?json(\s*;.*)?$/i;
