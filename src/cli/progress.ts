import type { Progress } from '../db/backup/progress';

/**
 * Progress of long work on stderr (stdout keeps the result alone). On a
 * terminal one line is redrawn about ten times a second; in a log (not a
 * terminal) each step is a line, with a progress line at most every 10 s.
 */
export function stderrProgress(stream: NodeJS.WriteStream = process.stderr): Progress & { end(): void } {
  const tty = stream.isTTY === true;
  const interval = tty ? 100 : 10_000;
  let label = '';
  let last = 0;
  let open = false; // a redrawn line is on screen
  const endLine = () => {
    if (open) stream.write('\n');
    open = false;
  };
  return {
    step(next) {
      endLine();
      label = next;
      last = Date.now();
      if (tty) {
        stream.write(`${label}…`);
        open = true;
      } else {
        stream.write(`${label}…\n`);
      }
    },
    advance(done, total, unit) {
      const now = Date.now();
      if (now - last < interval) return;
      last = now;
      const amount = unit === 'bytes' ? mib(done) + (total ? ` of ${mib(total)}` : '') : `${done}${total ? ` of ${total}` : ''} ${unit}`;
      const line = total ? `${label}: ${Math.floor((100 * done) / total)}% (${amount})` : `${label}: ${amount}`;
      if (tty) {
        stream.write(`\r\x1b[K${line}`);
        open = true;
      } else {
        stream.write(`  ${line}\n`);
      }
    },
    warn(message) {
      endLine();
      stream.write(`warning: ${message}\n`);
    },
    end: endLine,
  };
}

function mib(bytes: number): string {
  return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
}
