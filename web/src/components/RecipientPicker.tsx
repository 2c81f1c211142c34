import { useEffect, useRef, useState } from 'preact/hooks';
import { rank, type Suggestion } from '../lib/autocomplete';
import { recipientFocusRequest, setTarget } from '../state/compose';
import { me, userName, users } from '../state/store';
import { SuggestionList, useSuggestions } from './Suggestions';

/**
 * The people a direct message goes to: each chosen one as a removable
 * chip, and a field completing names and addresses. Backspace in the empty
 * field takes off the last one.
 */
export function RecipientPicker({ to }: { to: number[] }) {
  const [query, setQuery] = useState('');
  const field = useRef<HTMLInputElement>(null);
  const list = useSuggestions('dm-recipient-suggestions');

  useEffect(() => {
    if (recipientFocusRequest.value > 0) field.current?.focus();
  }, [recipientFocusRequest.value]);

  function suggest(q: string): void {
    const myId = me.value?.user_id;
    // register's realm_users are the active users, without is_active; a deactivation's event sets it false.
    const candidates = [...users.value.values()].filter((u) => u.is_active !== false && u.user_id !== myId && !to.includes(u.user_id));
    const items: Suggestion[] = rank(candidates, q, (u) => [u.full_name, u.email], 8).map((u) => ({
      key: `u:${u.user_id}`,
      label: u.full_name,
      detail: u.email,
      insert: String(u.user_id),
    }));
    list.show(q.trim() ? items : [], 0);
  }

  function pick(s: Suggestion): void {
    setTarget({ kind: 'dm', to: [...to, Number(s.insert)] }, true);
    setQuery('');
    list.close();
    field.current?.focus();
  }

  return (
    <div class="recipients">
      <span id="dm-recipients-label">To</span>
      <ul class="chips" aria-labelledby="dm-recipients-label">
        {to.map((id) => (
          <li key={id} class="chip">
            {userName(id)}
            <button
              type="button"
              class="icon"
              aria-label={`Remove ${userName(id)}`}
              onClick={() =>
                setTarget(
                  {
                    kind: 'dm',
                    to: to.filter((x) => x !== id),
                  },
                  true,
                )
              }
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      <div class="field-with-suggestions">
        <label class="visually-hidden" for="dm-recipient">
          Add a recipient
        </label>
        <input
          id="dm-recipient"
          ref={field}
          autocomplete="off"
          placeholder={to.length ? 'Add another person' : 'Name or email'}
          value={query}
          {...list.fieldAria}
          onInput={(e) => {
            setQuery(e.currentTarget.value);
            suggest(e.currentTarget.value);
          }}
          onBlur={() => list.close()}
          onKeyDown={(e) => {
            if (list.onKeyDown(e, pick)) return;
            if (e.key === 'Backspace' && query === '' && to.length) setTarget({ kind: 'dm', to: to.slice(0, -1) }, true);
            // Enter here chooses people; it never sends the message.
            if (e.key === 'Enter') e.preventDefault();
          }}
        />
        <SuggestionList id="dm-recipient-suggestions" label="People" state={list} onPick={pick} />
      </div>
    </div>
  );
}
