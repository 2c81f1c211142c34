import { useEffect, useRef } from 'preact/hooks';

/**
 * A modal <dialog>: the browser keeps focus inside it, Escape closes it, and
 * focus returns to what opened it. Clicking the backdrop closes it too.
 */
export function Dialog({
  label,
  class: cls,
  onClose,
  children,
}: {
  label: string;
  class?: string;
  onClose: () => void;
  children: preact.ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    ref.current?.showModal();
    return () => opener?.focus?.();
  }, []);
  return (
    <dialog
      ref={ref}
      class={`menu ${cls ?? ''}`}
      aria-label={label}
      onClose={onClose}
      onClick={(e) => {
        if (e.target === ref.current) ref.current?.close();
      }}
    >
      {children}
    </dialog>
  );
}
