import { useState } from 'preact/hooks';
import type { Suggestion } from '../lib/autocomplete';

/**
 * A list of suggestions under a text field, as a listbox the field
 * controls: the field keeps focus, ↑/↓ move the choice (announced through
 * aria-activedescendant), Enter or Tab takes it, Escape closes the list, and
 * a click takes one too.
 */
export interface SuggestionsState {
  open: { items: Suggestion[]; start: number } | null;
  active: number;
  show(items: Suggestion[], start: number): void;
  close(): void;
  /** Handles the list's keys; true when the key was the list's (and is not the field's). */
  onKeyDown(e: KeyboardEvent, pick: (s: Suggestion, start: number) => void): boolean;
  setActive(i: number): void;
  /** The ARIA attributes of the field the list belongs to. */
  fieldAria: Record<string, string | undefined>;
}

export function useSuggestions(id: string): SuggestionsState {
  const [open, setOpen] = useState<SuggestionsState['open']>(null);
  const [active, setActive] = useState(0);
  const close = () => setOpen(null);
  return {
    open,
    active,
    show(items, start) {
      if (items.length === 0) setOpen(null);
      else {
        setOpen({ items, start });
        setActive(0);
      }
    },
    close,
    setActive,
    onKeyDown(e, pick) {
      if (!open || e.isComposing) return false;
      const n = open.items.length;
      switch (e.key) {
        case 'ArrowDown':
          setActive((active + 1) % n);
          break;
        case 'ArrowUp':
          setActive((active - 1 + n) % n);
          break;
        case 'Enter':
        case 'Tab':
          if (e.shiftKey || e.ctrlKey || e.metaKey || e.altKey) return false;
          pick(open.items[Math.min(active, n - 1)], open.start);
          close();
          break;
        case 'Escape':
          close();
          break;
        default:
          return false;
      }
      e.preventDefault();
      e.stopPropagation();
      return true;
    },
    fieldAria: {
      'aria-autocomplete': 'list',
      'aria-controls': open ? id : undefined,
      'aria-activedescendant': open ? `${id}-${active}` : undefined,
    },
  };
}

export function SuggestionList({
  id,
  label,
  state,
  onPick,
}: {
  id: string;
  label: string;
  state: SuggestionsState;
  onPick: (s: Suggestion, start: number) => void;
}) {
  const { open, active } = state;
  if (!open) return null;
  return (
    <ul class="suggestions" id={id} role="listbox" aria-label={label}>
      {open.items.map((s, i) => (
        <li
          key={s.key}
          id={`${id}-${i}`}
          role="option"
          aria-selected={i === active}
          class={i === active ? 'active' : ''}
          // The field keeps focus: the choice is taken on click, not on the press that would blur it.
          onMouseDown={(e) => e.preventDefault()}
          // Only a pointer really moving takes the choice: a list opening under a resting
          // pointer gets a synthetic move with no movement, which must not override the keyboard's.
          onMouseMove={(e) => {
            if (e.movementX || e.movementY) state.setActive(i);
          }}
          onClick={() => {
            onPick(s, open.start);
            state.close();
          }}
        >
          {s.glyph?.src ? <img src={s.glyph.src} alt="" width={20} height={20} /> : null}
          {s.glyph?.text ? (
            <span class="glyph" aria-hidden="true">
              {s.glyph.text}
            </span>
          ) : null}
          <span class="label">{s.label}</span>
          {s.detail ? <span class="detail">{s.detail}</span> : null}
        </li>
      ))}
    </ul>
  );
}
