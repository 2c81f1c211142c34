import { post, type Integration } from './types';

/**
 * The generic JSON integration: posts the payload itself, pretty-printed in a
 * code block, under the topic "JSON". Zulip prints it with Python's
 * json.dumps(indent=2), which escapes every character outside ASCII
 * (\uXXXX, surrogate pairs for the rest); so does this.
 */
export const json: Integration = {
  name: 'json',
  displayName: 'JSON',
  handle(input) {
    const pretty = JSON.stringify(input.payload.raw, null, 2).replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    return post(null, 'JSON', `\`\`\`json\n${pretty}\n\`\`\``);
  },
  docs: {
    summary: 'Posts any JSON body it receives, pretty-printed, to check what a service sends.',
    setup: ['Give the service the URL below as its webhook URL; every JSON body it POSTs is posted as a code block.'],
  },
};
