import { render } from 'preact';
import { App } from './components/App';
import { start } from './state/events';
import { followTheme } from './lib/theme';
import { startNavigation } from './state/navigation';
import { startPresence } from './state/presence';
import { startShortcuts } from './state/shortcuts';
import './styles.css';

const root = document.getElementById('app') as HTMLElement;

start()
  .then(() => {
    followTheme();
    startNavigation();
    render(<App />, root);
    startShortcuts();
    startPresence();
  })
  .catch((e: unknown) => {
    root.textContent = `Parley could not load: ${e instanceof Error ? e.message : String(e)}`;
  });
