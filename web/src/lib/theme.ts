import { effect } from '@preact/signals';
import { settings } from '../state/store';

/**
 * The user's color_scheme setting on <html data-theme>: Zulip's 1 follows
 * the system (no attribute; styles.css asks prefers-color-scheme), 2 is
 * dark, 3 light. It follows the setting as user_settings events change it.
 */
export const COLOR_SCHEME = { AUTOMATIC: 1, DARK: 2, LIGHT: 3 } as const;

export function followTheme(): () => void {
  return effect(() => {
    const scheme = settings.value.color_scheme;
    const root = document.documentElement;
    if (scheme === COLOR_SCHEME.DARK) root.dataset.theme = 'dark';
    else if (scheme === COLOR_SCHEME.LIGHT) root.dataset.theme = 'light';
    else delete root.dataset.theme;
  });
}
