import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalFileStore } from '../src/storage/files';

/** A directory on another file system than the temporary one (tmpfs), when the machine has one. */
const otherDevice = ['/dev/shm', '/run'].find((dir) => {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return fs.statSync(dir).dev !== fs.statSync(os.tmpdir()).dev;
  } catch {
    return false;
  }
});

describe('LocalFileStore.moveIn', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-store-'));
  const store = new LocalFileStore(root);
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('renames a file of the same file system into place', async () => {
    const source = path.join(root, 'assembled');
    fs.writeFileSync(source, 'same device');
    const inode = fs.statSync(source).ino;
    await store.moveIn(source, '1/ab/AAAAAAAAAAAAAAAAAAAAAAAA/same.txt');
    const target = path.join(root, '1', 'ab', 'AAAAAAAAAAAAAAAAAAAAAAAA', 'same.txt');
    expect(fs.statSync(target).ino).toBe(inode);
    expect(fs.existsSync(source)).toBe(false);
  });

  it('refuses a key that is not a path id, leaving the source', async () => {
    const source = path.join(root, 'kept');
    fs.writeFileSync(source, 'x');
    await expect(store.moveIn(source, '../escape.txt')).rejects.toThrow('not an upload path id');
    expect(fs.existsSync(source)).toBe(true);
  });

  (otherDevice ? it : it.skip)('copies across file systems, then removes the source; nothing stays staged', async () => {
    const source = fs.mkdtempSync(path.join(otherDevice!, 'parley-move-'));
    const file = path.join(source, 'assembled');
    fs.writeFileSync(file, 'another device');
    try {
      await store.moveIn(file, '1/cd/BBBBBBBBBBBBBBBBBBBBBBBB/other.txt');
      expect(fs.readFileSync(path.join(root, '1', 'cd', 'BBBBBBBBBBBBBBBBBBBBBBBB', 'other.txt'), 'utf8')).toBe('another device');
      expect(fs.existsSync(file)).toBe(false);
      expect(fs.readdirSync(path.join(root, '.incoming'))).toEqual([]);
    } finally {
      fs.rmSync(source, { recursive: true, force: true });
    }
  });
});
