import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../api/client';
import { ago } from '../lib/time';

/**
 * "Your sessions": the browsers and devices signed in to the account
 * (GET /users/me/sessions), each but the current one with a button to sign
 * it out. The calls are passed in, so the list draws alike whatever makes them.
 */
export type BrowserSession = Schemas['Session'];

export interface SessionCalls {
  list(): Promise<BrowserSession[]>;
  revoke(id: BrowserSession['id']): Promise<unknown>;
}

/** Browsers and systems by a mark of their User-Agent, the more specific first (Edge says Chrome too, Chrome says Safari). */
const BROWSERS: readonly [RegExp, string][] = [
  [/Edg\//, 'Edge'],
  [/Firefox\//, 'Firefox'],
  [/Chrom(e|ium)\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/Zulip/i, 'Zulip app'],
];
const SYSTEMS: readonly [RegExp, string][] = [
  [/Android/, 'Android'],
  [/iPhone|iPad|iOS/, 'iOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/Linux/, 'Linux'],
];

/** A user agent as a person names it: "Firefox on Linux". */
export function describeAgent(agent: string | null): string {
  if (!agent) return 'Unknown device';
  const browser = BROWSERS.find(([re]) => re.test(agent))?.[1] ?? (agent.split(/[\s/]/)[0] || 'Unknown browser');
  const os = SYSTEMS.find(([re]) => re.test(agent))?.[1];
  return os ? `${browser} on ${os}` : browser;
}

export function Sessions({ calls }: { calls: SessionCalls }) {
  const [sessions, setSessions] = useState<BrowserSession[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  function refresh(): void {
    calls
      .list()
      .then(setSessions)
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }
  useEffect(refresh, [calls]);

  return (
    <div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {sessions === null && !error && <p class="soft">Loading…</p>}
      {sessions && (
        <table class="sessions">
          <caption class="visually-hidden">Your sessions</caption>
          <thead>
            <tr>
              <th scope="col">Device</th>
              <th scope="col">IP address</th>
              <th scope="col">Last active</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr key={s.id}>
                <td>
                  {describeAgent(s.user_agent)}
                  {s.current && <strong class="current-session"> (this session)</strong>}
                </td>
                <td>{s.ip_address ?? '—'}</td>
                <td>{ago(s.last_active)}</td>
                <td>
                  {!s.current && (
                    <button
                      type="button"
                      aria-label={`Log out ${describeAgent(s.user_agent)}, last active ${ago(s.last_active)}`}
                      onClick={() => {
                        calls
                          .revoke(s.id)
                          .then(refresh)
                          .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
                      }}
                    >
                      Log out
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
