import { SHORTCUTS } from '../state/shortcuts';
import { Dialog } from './Dialog';

/** The keyboard shortcuts, opened with ? or the top bar's button. */
export function HelpDialog({ onClose }: { onClose: () => void }) {
  return (
    <Dialog label="Keyboard shortcuts" class="help" onClose={onClose}>
      <h2>Keyboard shortcuts</h2>
      <table>
        <caption class="visually-hidden">Keys and what they do</caption>
        <tbody>
          {SHORTCUTS.map((s) => (
            <tr key={s.keys}>
              <th scope="row">
                <kbd>{s.keys}</kbd>
              </th>
              <td>{s.what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" onClick={onClose}>
        Close
      </button>
    </Dialog>
  );
}
