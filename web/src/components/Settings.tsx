import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../api/client';
import { lastPlace, hashOf } from '../state/navigation';
import { COLOR_SCHEME } from '../lib/theme';
import { channelName, me, settings, topicPolicies, topicPolicyNames, VISIBILITY } from '../state/store';
import { setTopicPolicy } from '../state/topics';
import { Sessions, type SessionCalls } from './Sessions';

type SettingsChange = Schemas['UpdateSettingsRequest'];

/** The sessions list's calls: Parley's GET and DELETE /users/me/sessions (Zulip has no such list). */
const sessionCalls: SessionCalls = {
  list: async () => (await ok(api.GET('/users/me/sessions'))).sessions,
  revoke: (id) => ok(api.DELETE('/users/me/sessions/{session_id}', { params: { path: { session_id: Number(id) } } })),
};

async function change(body: SettingsChange): Promise<void> {
  // Shown at once; the user_settings event that follows confirms it.
  settings.value = { ...settings.value, ...body };
  await ok(api.PATCH('/settings', { body }));
}

function Toggle({ name, label }: { name: keyof SettingsChange; label: string }) {
  return (
    <label class="choice">
      <input type="checkbox" checked={settings.value[name] === true} onChange={(e) => void change({ [name]: e.currentTarget.checked })} />
      {label}
    </label>
  );
}

/** Personal settings, an overlay at #settings over the message view. */
export function Settings() {
  const [name, setName] = useState(me.value?.full_name ?? '');
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const muted = [...topicPolicies.value].filter(([, p]) => p === VISIBILITY.MUTED).map(([k]) => topicPolicyNames.value.get(k));

  function run(p: Promise<unknown>, done: string): void {
    setError(null);
    setStatus(null);
    p.then(() => setStatus(done)).catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }

  return (
    <section class="settings" aria-labelledby="settings-title">
      <header class="settings-head">
        <h1 id="settings-title">Personal settings</h1>
        <a href={hashOf(lastPlace.value)} class="close-overlay">
          Close
        </a>
      </header>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {status && <p role="status">{status}</p>}

      <h2>Profile</h2>
      <form
        class="row-form"
        onSubmit={(e) => {
          e.preventDefault();
          run(change({ full_name: name.trim() }), 'Name saved.');
        }}
      >
        <label>
          Full name
          <input value={name} required maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={!name.trim() || name.trim() === me.value?.full_name}>
          Save
        </button>
      </form>

      <h2>Display</h2>
      <label>
        Theme{' '}
        <select
          value={String(settings.value.color_scheme ?? COLOR_SCHEME.AUTOMATIC)}
          onChange={(e) => run(change({ color_scheme: Number(e.currentTarget.value) as 1 | 2 | 3 }), 'Theme saved.')}
        >
          <option value={COLOR_SCHEME.AUTOMATIC}>Automatic (as the system)</option>
          <option value={COLOR_SCHEME.LIGHT}>Light</option>
          <option value={COLOR_SCHEME.DARK}>Dark</option>
        </select>
      </label>
      <Toggle name="twenty_four_hour_time" label="Show times on a 24-hour clock" />
      <Toggle name="enter_sends" label="Enter sends a message (Shift+Enter for a new line)" />

      <h2>Notifications</h2>
      <p class="soft">For direct messages and mentions:</p>
      <Toggle name="enable_desktop_notifications" label="Desktop notifications" />
      <Toggle name="enable_sounds" label="Sounds" />
      <Toggle name="enable_offline_email_notifications" label="Emails when I am away" />

      <h2>Muted topics</h2>
      {muted.length === 0 ? (
        <p class="soft">You have not muted any topics.</p>
      ) : (
        <ul class="muted-topics">
          {muted.map((t) =>
            t ? (
              <li key={`${t.channelId}:${t.topic}`}>
                #{channelName(t.channelId)} › {t.topic || 'general chat'}{' '}
                <button type="button" onClick={() => run(setTopicPolicy(t.channelId, t.topic, VISIBILITY.INHERIT), 'Topic unmuted.')}>
                  Unmute
                </button>
              </li>
            ) : null,
          )}
        </ul>
      )}

      <h2>Your sessions</h2>
      <Sessions calls={sessionCalls} />
    </section>
  );
}
