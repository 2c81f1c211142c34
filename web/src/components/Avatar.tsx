import { users } from '../state/store';

/**
 * A user's picture when it is served by Parley itself; otherwise (an outside
 * service such as Gravatar, which the page's Content-Security-Policy forbids)
 * their initials on a colour drawn from their id.
 */
export function Avatar({ userId, url, name, size = 36 }: { userId: number; url?: string | null; name?: string; size?: number }) {
  const user = users.value.get(userId);
  const src = url ?? user?.avatar_url ?? null;
  const label = name ?? user?.full_name ?? '';
  if (src && sameOrigin(src)) {
    return <img class="avatar" src={src} alt="" width={size} height={size} loading="lazy" />;
  }
  const initials = label
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((w) => w[0]?.toUpperCase())
    .join('');
  return (
    <span class={`avatar initials hue-${userId % 8}`} style={{ width: `${size}px`, height: `${size}px` }} aria-hidden="true">
      {initials || '?'}
    </span>
  );
}

function sameOrigin(url: string): boolean {
  try {
    return new URL(url, location.href).origin === location.origin;
  } catch {
    return false;
  }
}
