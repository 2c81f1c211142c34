import { render } from 'preact';
import { App } from './components/App';
import { start } from './state/events';
import { startNavigation } from './state/navigation';
import './styles.css';

const root = document.getElementById('app') as HTMLElement;

start()
  .then(() => {
    startNavigation();
    render(<App />, root);
  })
  .catch((e: unknown) => {
    root.textContent = `Parley could not load: ${e instanceof Error ? e.message : String(e)}`;
  });
