import { Virtualizer, elementScroll, observeElementOffset, observeElementRect, type VirtualizerOptions } from '@tanstack/virtual-core';
import { useEffect, useLayoutEffect, useReducer, useState } from 'preact/hooks';

/**
 * A virtualised list for Preact on @tanstack/virtual-core: only the rows
 * in and near the viewport are in the DOM, each measured once drawn, so a
 * list of tens of thousands of messages scrolls as one of fifty.
 */
export function useVirtualizer(
  options: Omit<VirtualizerOptions<HTMLElement, Element>, 'observeElementRect' | 'observeElementOffset' | 'scrollToFn' | 'onChange'>,
): Virtualizer<HTMLElement, Element> {
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const [v] = useState(
    () =>
      new Virtualizer<HTMLElement, Element>({
        ...options,
        observeElementRect,
        observeElementOffset,
        scrollToFn: elementScroll,
        onChange: () => redraw(undefined as never),
      }),
  );
  v.setOptions({ ...v.options, ...options, onChange: () => redraw(undefined as never) });
  useEffect(() => v._didMount(), [v]);
  useLayoutEffect(() => v._willUpdate());
  return v;
}
