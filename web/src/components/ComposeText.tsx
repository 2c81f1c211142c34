import type { RefObject } from 'preact';
import {
  applySuggestion,
  channelSuggestions,
  emojiSuggestions,
  findTrigger,
  mentionSuggestions,
  topicSuggestions,
  type Suggestion,
} from '../lib/autocomplete';
import { content, target } from '../state/compose';
import { allEmoji, loadEmojiNames } from '../state/emoji';
import { channelByName, realm, subscriptions, userGroups, users } from '../state/store';
import { COMPOSE_TOPICS_MAX_AGE_MS, loadTopics, topicsByChannel } from '../state/topics';
import { SuggestionList, useSuggestions } from './Suggestions';

const LIST_ID = 'compose-suggestions';

/**
 * The message field, completing what is typed at the caret (see
 * lib/autocomplete.ts): people, groups and wildcards after `@`, channels
 * after `#` and their topics after `>`, emoji after `:`.
 */
export function ComposeText({
  field,
  placeholder,
  onKeyDown,
  onTyped,
  onPasteFiles,
}: {
  field: RefObject<HTMLTextAreaElement | null>;
  placeholder: string;
  onKeyDown: (e: KeyboardEvent) => void;
  onTyped: (text: string) => void;
  onPasteFiles: (files: File[]) => void;
}) {
  const list = useSuggestions(LIST_ID);

  function suggestionsAt(text: string, caret: number): { items: Suggestion[]; start: number } | null {
    const trigger = findTrigger(text, caret);
    if (!trigger) return null;
    switch (trigger.kind) {
      case 'mention':
        return {
          start: trigger.start,
          items: mentionSuggestions(
            trigger.query,
            trigger.silent,
            [...users.value.values()],
            userGroups.value,
            target.value.kind === 'channel',
          ),
        };
      case 'channel':
        return { start: trigger.start, items: channelSuggestions(trigger.query, subscriptions.value) };
      case 'topic': {
        const channel = channelByName(trigger.channel);
        if (!channel) return null;
        const known = topicsByChannel.value.get(channel.stream_id);
        if (!known)
          void loadTopics(channel.stream_id, COMPOSE_TOPICS_MAX_AGE_MS).then(
            (names) => names.length > 0 && refresh(),
            () => undefined,
          );
        return { start: trigger.start, items: topicSuggestions(trigger.query, channel.name, known ?? []) };
      }
      case 'emoji':
        void loadEmojiNames().then((arrived) => arrived && refresh());
        return { start: trigger.start, items: emojiSuggestions(trigger.query, allEmoji.value) };
    }
  }

  /** Looks again at the token at the caret (after typing, a click, or data arriving). */
  function refresh(): void {
    const el = field.current;
    if (!el || document.activeElement !== el) return;
    const found = suggestionsAt(el.value, el.selectionStart ?? el.value.length);
    if (found) list.show(found.items, found.start);
    else list.close();
  }

  function pick(s: Suggestion, start: number): void {
    const el = field.current;
    if (!el) return;
    const next = applySuggestion(el.value, start, el.selectionStart ?? el.value.length, s.insert);
    content.value = next.text;
    el.value = next.text;
    el.setSelectionRange(next.caret, next.caret);
    onTyped(next.text);
    // A channel chosen may go on to its topics (`>`), so the list is looked at again.
    queueMicrotask(refresh);
  }

  return (
    <div class="field-with-suggestions">
      <label class="visually-hidden" for="compose-content">
        Message
      </label>
      <textarea
        id="compose-content"
        ref={field}
        name="content"
        rows={3}
        placeholder={placeholder}
        maxLength={realm.value.maxMessageLength}
        value={content.value}
        {...list.fieldAria}
        onInput={(e) => {
          content.value = e.currentTarget.value;
          onTyped(e.currentTarget.value);
          refresh();
        }}
        onKeyDown={(e) => {
          if (!list.onKeyDown(e, pick)) onKeyDown(e);
        }}
        onKeyUp={(e) => {
          if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key)) refresh();
        }}
        onClick={refresh}
        onBlur={() => list.close()}
        onPaste={(e) => {
          const files = [...(e.clipboardData?.files ?? [])];
          if (files.length) {
            e.preventDefault();
            onPasteFiles(files);
          }
        }}
      />
      <SuggestionList id={LIST_ID} label="Suggestions" state={list} onPick={pick} />
    </div>
  );
}
