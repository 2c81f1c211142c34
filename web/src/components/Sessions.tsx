import { useEffect, useState } from 'preact/hooks';
import { ago } from '../lib/time';

/**
 * "Your sessions": the browsers and devices signed in to the account, each
 * but the current one with a button to sign it out. The shape is that of
 * GET /users/me/sessions; the calls are passed in so that this list draws
 * the same whatever provides them.
 */
export interface BrowserSession {
  id: string | number;
  created: number;
  last_active: number;
  expires: number;
  ip_address: string | null;
  user_agent: string | null;
  current: boolean;
}

export interface SessionCalls {
  list(): Promise<BrowserSession[]>;
  revoke(id: BrowserSession['id']): Promise<unknown>;
}

/** A user agent as a person names it: "Firefox on Linux". */
export function describeAgent(agent: string | null): string {
  if (!agent) return 'Unknown device';
  const browser = /Edg\//.test(agent)
    ? 'Edge'
    : /Firefox\//.test(agent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(agent)
        ? 'Chrome'
        : /Safari\//.test(agent)
          ? 'Safari'
          : /ZulipMobile|Zulip/i.test(agent)
            ? 'Zulip app'
            : agent.split(/[\s/]/)[0] || 'Unknown browser';
  const os = /Android/.test(agent)
    ? 'Android'
    : /iPhone|iPad|iOS/.test(agent)
      ? 'iOS'
      : /Windows/.test(agent)
        ? 'Windows'
        : /Mac OS X|Macintosh/.test(agent)
          ? 'macOS'
          : /Linux/.test(agent)
            ? 'Linux'
            : null;
  return os ? `${browser} on ${os}` : browser;
}

export function Sessions({ calls }: { calls: SessionCalls | null }) {
  const [sessions, setSessions] = useState<BrowserSession[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  function refresh(): void {
    if (!calls) return;
    calls
      .list()
      .then(setSessions)
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }
  useEffect(refresh, [calls]);

  if (!calls) return <p class="soft">The list of sessions is not available on this server yet.</p>;
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
