import { pushContent } from '../src/domain/push-devices';

/** A notification's text from the rendered message (Zulip's get_mobile_push_content). */
describe('push notification content', () => {
  it('turns entities back into characters, and leaves a name that is no entity as written', () => {
    expect(pushContent('<p>a &amp; b &lt;c&gt; &quot;d&quot; &#39;e&#x27; &#x1F600;</p>')).toBe('a & b <c> "d" \'e\' 😀');
    // Names of Object's own properties are no entities (a lookup in a plain object found them).
    expect(pushContent('<p>&constructor; &toString; &__proto__; &hasOwnProperty;</p>')).toBe(
      '&constructor; &toString; &__proto__; &hasOwnProperty;',
    );
  });
});
