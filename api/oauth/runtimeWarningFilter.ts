// oidc-provider 9 warns on import that it wants Node 22. It runs on Node 20 for all this service
// uses (docs/oauth.md, "Feasibility"), and a warning on stderr before anything the service says
// misleads operators and breaks the start's one-line refusals (a full disk, a bad setting). Imported
// just before oidc-provider (./oidcProvider.ts), which puts console.warn back right after.
const UNSUPPORTED_RUNTIME = 'oidc-provider WARNING: Unsupported runtime';
const warn = console.warn;

console.warn = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && args[0].includes(UNSUPPORTED_RUNTIME)) return;
  warn(...args);
};

export function restoreConsoleWarn(): void {
  console.warn = warn;
}
