import { extractMentionCandidates, renderMessage, type RenderContext } from './zulip';

interface Fixture {
  users?: Array<{ id: number; full_name: string }>;
  groups?: Array<{ id: number; name: string }>;
  channels?: Array<{ id: number; name: string }>;
  realmEmoji?: Array<{ id: string; name: string; source_url: string }>;
}

function context(fixture: Fixture = {}): RenderContext {
  const users = fixture.users ?? [
    { id: 10, full_name: 'Alice Smith' },
    { id: 11, full_name: 'Bob Jones' },
  ];
  const usersByName = new Map<string, Array<{ id: number; full_name: string }>>();
  for (const user of users) {
    const key = user.full_name.toLowerCase();
    usersByName.set(key, [...(usersByName.get(key) ?? []), user]);
  }
  const byLowerName = <T extends { name: string }>(rows: T[]) => new Map(rows.map((row) => [row.name.toLowerCase(), row]));
  return {
    usersByName,
    usersById: new Map(users.map((user) => [user.id, user])),
    groupsByName: byLowerName(fixture.groups ?? [{ id: 30, name: 'Support Team' }]),
    channelsByName: byLowerName(
      fixture.channels ?? [
        { id: 7, name: 'general' },
        { id: 8, name: 'Dev Help' },
      ],
    ),
    realmEmoji: new Map((fixture.realmEmoji ?? []).map((emoji) => [emoji.name, emoji])),
  };
}

const render = (content: string, fixture?: Fixture) => renderMessage(content, context(fixture));
const html = (content: string, fixture?: Fixture) => render(content, fixture).html;

describe('basic Markdown, as Zulip renders it', () => {
  it('renders nothing for empty content and paragraphs otherwise', () => {
    expect(html('')).toBe('');
    expect(html('test_input')).toBe('<p>test_input</p>');
  });

  it('turns single newlines into <br>', () => {
    expect(html('test\nbar')).toBe('<p>test<br>\nbar</p>');
  });

  it('emphasises with * only; underscores stay literal', () => {
    expect(html('*foo* **bar**')).toBe('<p><em>foo</em> <strong>bar</strong></p>');
    expect(html('const char *x = (char *)y')).toBe('<p>const char *x = (char *)y</p>');
    expect(html('_foo_ __init__ snake_case_name')).toBe('<p>_foo_ __init__ snake_case_name</p>');
  });

  it('renders ~~strikethrough~~ as <del>', () => {
    expect(html('I like ~~software~~ hardware')).toBe('<p>I like <del>software</del> hardware</p>');
  });

  it('renders lists, block quotes and headings', () => {
    expect(html('Some text:\n\n* One\n* Two')).toBe('<p>Some text:</p>\n<ul>\n<li>One</li>\n<li>Two</li>\n</ul>');
    expect(html('> Hello World!')).toBe('<blockquote>\n<p>Hello World!</p>\n</blockquote>');
    expect(html('# Hello world')).toBe('<h1>Hello world</h1>');
    expect(html('#Hello world')).toBe('<p>#Hello world</p>');
  });

  it('has no setext headings and no reference links', () => {
    expect(html('Title\n===')).toBe('<p>Title<br>\n===</p>');
    expect(html('Hello [world]\n\n[world]: https://google.com')).toBe(
      '<p>Hello [world]</p>\n<p>[world]: <a href="https://google.com" rel="noopener noreferrer" target="_blank">https://google.com</a></p>',
    );
  });

  it('turns ```quote fences into block quotes with Markdown inside', () => {
    expect(html('Hamlet said:\n~~~ quote\nTo be or **not** to be.\n\nThat is the question\n~~~')).toBe(
      '<p>Hamlet said:</p>\n<blockquote>\n<p>To be or <strong>not</strong> to be.</p>\n<p>That is the question</p>\n</blockquote>',
    );
  });

  it('keeps a code fence nested in a quote fence inside the quote', () => {
    expect(html('~~~quote\nbefore\n```\ncode\n```\nafter\n~~~\noutside')).toBe(
      '<blockquote>\n<p>before</p>\n<div class="codehilite"><pre><span></span><code>code\n</code></pre></div>\n<p>after</p>\n</blockquote>\n<p>outside</p>',
    );
  });

  it("renders ```spoiler fences with Zulip's spoiler markup", () => {
    expect(html('```spoiler header\ncontent\n```\noutside spoiler')).toBe(
      '<div class="spoiler-block"><div class="spoiler-header">\n<p>header</p>\n</div>' +
        '<div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>\n<p>outside spoiler</p>',
    );
  });
});

describe('code', () => {
  it('reads a line that only looks like a fence in linear time, nested in quote fences too', () => {
    // Before, 15 nested quote fences and this line took seconds (FENCE_LINE tried every split
    // of the line's letters between language and header, at each nesting level).
    const nested = '```quote\n'.repeat(15) + '```' + 'a'.repeat(9000) + '~\n';
    const start = performance.now();
    const out = html(nested);
    expect(performance.now() - start).toBeLessThan(2000);
    expect(out.startsWith('<blockquote>\n<blockquote>')).toBe(true);
    // A real fence with a language and a header still parses.
    expect(html('```quote Hamlet\nhi\n```')).toBe('<blockquote>\n<p>hi</p>\n</blockquote>');
  });

  it('wraps fenced code like Pygments does, escaping quotes too', () => {
    expect(html('~~~\n<h1>it\'s "x" & y</h1>\n~~~')).toBe(
      '<div class="codehilite"><pre><span></span><code>&lt;h1&gt;it&#39;s &quot;x&quot; &amp; y&lt;/h1&gt;\n</code></pre></div>',
    );
  });

  it('records the language, canonicalised for known aliases and lower-cased otherwise', () => {
    expect(html('```py\nx = 1\n```')).toContain('<div class="codehilite" data-code-language="Python">');
    expect(html('``` InventedLanguage\nx\n```')).toContain('data-code-language="inventedlanguage"');
    expect(html('```"><script>\nx\n```')).not.toContain('<script>');
  });

  it('strips trailing spaces and surrounding blank lines', () => {
    expect(html('```\n\ndef f():   \n    x = 1\t\n\n```')).toBe(
      '<div class="codehilite"><pre><span></span><code>def f():\n    x = 1\n</code></pre></div>',
    );
  });

  it('renders indented code blocks the same way', () => {
    expect(html('    def foo(): pass')).toBe('<div class="codehilite"><pre><span></span><code>def foo(): pass\n</code></pre></div>');
  });

  it('renders inline code', () => {
    expect(html('`<&nbsp;>`')).toBe('<p><code>&lt;&amp;nbsp;&gt;</code></p>');
  });

  it('recognises no mentions, channels, emoji or links inside code', () => {
    const content = [
      '`@**Alice Smith** #**general** :smile: https://x.com`',
      '```',
      '@**Alice Smith** @*Support Team* @**all** #**general** :smile: https://x.com/a.png /user_uploads/1/a.txt',
      '```',
      '    @**Bob Jones** https://y.com',
    ].join('\n');
    const result = render(content);
    expect(result.html).not.toMatch(/mention|emoji|<a /);
    expect(result.mentionedUserIds.size).toBe(0);
    expect(result.mentionedGroupIds.size).toBe(0);
    expect(result.streamWildcard).toBe(false);
    expect(result.hasLink).toBe(false);
    expect(result.hasImage).toBe(false);
    expect(result.hasAttachment).toBe(false);
  });
});

describe('user mentions', () => {
  it('renders @**Full Name** with the user id and counts it', () => {
    const result = render('hi @**Alice Smith**!');
    expect(result.html).toBe('<p>hi <span class="user-mention" data-user-id="10">@Alice Smith</span>!</p>');
    expect([...result.mentionedUserIds]).toEqual([10]);
  });

  it('matches names case-insensitively but shows the real name', () => {
    expect(html('@**alice SMITH**')).toBe('<p><span class="user-mention" data-user-id="10">@Alice Smith</span></p>');
  });

  it('renders silent mentions without "@" and does not count them', () => {
    const result = render('@_**Alice Smith**');
    expect(result.html).toBe('<p><span class="user-mention silent" data-user-id="10">Alice Smith</span></p>');
    expect(result.mentionedUserIds.size).toBe(0);
  });

  it('uses the id in @**Name|id** and @**|id**', () => {
    const result = render('@**Alice Smith|10** and @**|11**');
    expect(result.html).toBe(
      '<p><span class="user-mention" data-user-id="10">@Alice Smith</span> and ' +
        '<span class="user-mention" data-user-id="11">@Bob Jones</span></p>',
    );
    expect([...result.mentionedUserIds].sort()).toEqual([10, 11]);
  });

  it('rejects an id whose user has another name, and unknown ids', () => {
    const result = render('@**Alice Smith|11** @**|99**');
    expect(result.html).not.toContain('user-mention');
    expect(result.mentionedUserIds.size).toBe(0);
  });

  it('does not guess between two users with the same name, but an id disambiguates', () => {
    const twins = {
      users: [
        { id: 1, full_name: 'Sam' },
        { id: 2, full_name: 'Sam' },
      ],
    };
    const ambiguous = render('@**Sam**', twins);
    expect(ambiguous.html).not.toContain('user-mention');
    expect(ambiguous.mentionedUserIds.size).toBe(0);
    const exact = render('@**Sam|2**', twins);
    expect(exact.html).toBe('<p><span class="user-mention" data-user-id="2">@Sam</span></p>');
    expect([...exact.mentionedUserIds]).toEqual([2]);
  });

  it('falls back to ordinary Markdown for unknown names, as Zulip does', () => {
    const result = render('Hey @**Nonexistent User**');
    expect(result.html).toBe('<p>Hey @<strong>Nonexistent User</strong></p>');
    expect(result.mentionedUserIds.size).toBe(0);
  });

  it('only starts a mention after whitespace or an opening bracket or quote', () => {
    expect(render('mail@**Alice Smith**').mentionedUserIds.size).toBe(0);
    expect(render('(@**Alice Smith**)').mentionedUserIds.has(10)).toBe(true);
    expect(render('"@**Alice Smith**"').mentionedUserIds.has(10)).toBe(true);
  });

  it('works inside emphasis and list items', () => {
    expect(html('**hey @**Alice Smith** there**')).toBe(
      '<p><strong>hey <span class="user-mention" data-user-id="10">@Alice Smith</span> there</strong></p>',
    );
    expect(render('* item @**Bob Jones**').mentionedUserIds.has(11)).toBe(true);
  });

  it('silences mentions inside block quotes and quote fences', () => {
    for (const content of ['> @**Alice Smith** said', '```quote\n@**Alice Smith** said\n```']) {
      const result = render(content);
      expect(result.html).toContain('<span class="user-mention silent" data-user-id="10">Alice Smith</span>');
      expect(result.mentionedUserIds.size).toBe(0);
    }
  });

  it('still counts a mention outside the quote it replies to', () => {
    const result = render('@_**Bob Jones|11** said:\n```quote\n@**Alice Smith** hi\n```\n@**Bob Jones** ok');
    expect([...result.mentionedUserIds]).toEqual([11]);
  });
});

describe('wildcard mentions', () => {
  it.each(['all', 'everyone', 'channel', 'stream'])('@**%s** is a channel wildcard', (word) => {
    const result = render(`@**${word}**`);
    expect(result.html).toBe(`<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@${word}</span></p>`);
    expect(result.streamWildcard).toBe(true);
    expect(result.topicWildcard).toBe(false);
    expect(result.mentionedUserIds.size).toBe(0);
  });

  it('@**topic** is a topic wildcard with no user id', () => {
    const result = render('@**topic**');
    expect(result.html).toBe('<p><span class="topic-mention">@topic</span></p>');
    expect(result.topicWildcard).toBe(true);
    expect(result.streamWildcard).toBe(false);
  });

  it('silent wildcards render but set no flag', () => {
    const result = render('@_**all** @_**topic**');
    expect(result.html).toBe(
      '<p><span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span> ' +
        '<span class="topic-mention silent">topic</span></p>',
    );
    expect(result.streamWildcard).toBe(false);
    expect(result.topicWildcard).toBe(false);
  });

  it('quoted wildcards do not notify', () => {
    const result = render('> @**all** @**topic**');
    expect(result.streamWildcard).toBe(false);
    expect(result.topicWildcard).toBe(false);
  });

  it('is a user mention when someone is named exactly like the wildcard', () => {
    const result = render('@**all**', { users: [{ id: 5, full_name: 'all' }] });
    expect(result.html).toBe('<p><span class="user-mention" data-user-id="5">@all</span></p>');
    expect(result.streamWildcard).toBe(false);
    expect([...result.mentionedUserIds]).toEqual([5]);
  });

  it('matches wildcard words case-sensitively', () => {
    expect(render('@**All**').streamWildcard).toBe(false);
    expect(render('@**All**', { users: [{ id: 6, full_name: 'All' }] }).streamWildcard).toBe(false);
    expect(render('@**all**', { users: [{ id: 6, full_name: 'All' }] }).streamWildcard).toBe(true);
  });
});

describe('group mentions', () => {
  it('renders @*group* and counts it', () => {
    const result = render('ping @*support team*');
    expect(result.html).toBe('<p>ping <span class="user-group-mention" data-user-group-id="30">@Support Team</span></p>');
    expect([...result.mentionedGroupIds]).toEqual([30]);
    expect(result.mentionedUserIds.size).toBe(0);
  });

  it('renders silent group mentions without counting them', () => {
    const result = render('@_*Support Team*');
    expect(result.html).toBe('<p><span class="user-group-mention silent" data-user-group-id="30">Support Team</span></p>');
    expect(result.mentionedGroupIds.size).toBe(0);
  });

  it('leaves unknown groups to Markdown and silences quoted ones', () => {
    expect(html('@*nobody*')).toBe('<p>@<em>nobody</em></p>');
    expect(render('> @*Support Team*').mentionedGroupIds.size).toBe(0);
  });
});

describe('channel and topic links', () => {
  it('links #**channel**', () => {
    const result = render('see #**general**');
    expect(result.html).toBe('<p>see <a class="stream" data-stream-id="7" href="/#narrow/channel/7-general">#general</a></p>');
    // Zulip counts channel links as links (has_link covers every <a>).
    expect(result.hasLink).toBe(true);
  });

  it('matches channel names case-insensitively and shows the real name', () => {
    expect(html('#**dev help**')).toBe('<p><a class="stream" data-stream-id="8" href="/#narrow/channel/8-Dev-Help">#Dev Help</a></p>');
  });

  it("links #**channel>topic** with Zulip's hash encoding", () => {
    expect(html('#**Dev Help>release v1.2 (beta)**')).toBe(
      '<p><a class="stream-topic" data-stream-id="8" href="/#narrow/channel/8-Dev-Help/topic/release.20v1.2E2.20.28beta.29">' +
        '#Dev Help &gt; release v1.2 (beta)</a></p>',
    );
  });

  it('links #**channel>topic@id** to the message', () => {
    expect(html('#**general>lunch@42**')).toBe(
      '<p><a class="message-link" href="/#narrow/channel/7-general/topic/lunch/near/42">#general &gt; lunch @ 💬</a></p>',
    );
  });

  it('links the empty topic: #**channel>** and #**channel>@id** (feature level 346)', () => {
    expect(html('#**general>**')).toBe(
      '<p><a class="stream-topic" data-stream-id="7" href="/#narrow/channel/7-general/topic/">#general &gt; <em>general chat</em></a></p>',
    );
    expect(html('#**general>@42**')).toBe(
      '<p><a class="message-link" href="/#narrow/channel/7-general/topic//near/42">#general &gt; <em>general chat</em> @ 💬</a></p>',
    );
    // A topic that merely looks like a message id suffix is still a topic.
    expect(html('#**general>@x**')).toBe(
      '<p><a class="stream-topic" data-stream-id="7" href="/#narrow/channel/7-general/topic/.40x">#general &gt; @x</a></p>',
    );
  });

  it('leaves unknown channels to Markdown', () => {
    const result = render('#**secret**');
    expect(result.html).toBe('<p>#<strong>secret</strong></p>');
    expect(result.hasLink).toBe(false);
  });
});

describe('emoji', () => {
  it("renders :name: as Zulip's emoji span, with the name as typed", () => {
    expect(html(':smile: :+1:')).toBe(
      '<p><span aria-label="smile" class="emoji emoji-1f604" role="img" title="smile">:smile:</span> ' +
        '<span aria-label="+1" class="emoji emoji-1f44d" role="img" title="+1">:+1:</span></p>',
    );
  });

  it('uses spaces for underscores in the title', () => {
    expect(html(':party_popper:')).toBe(
      '<p><span aria-label="party popper" class="emoji emoji-1f389" role="img" title="party popper">:party_popper:</span></p>',
    );
  });

  it('handles emoji next to each other and to text, and leaves unknown names alone', () => {
    const out = html(':cat:hello:dog::rabbit: :not_an_emoji: x::y::z');
    expect(out.match(/class="emoji /g)).toHaveLength(3);
    expect(out).toContain('</span>hello<span');
    expect(out).toContain(' :not_an_emoji: x::y::z</p>');
  });

  it('renders realm emoji as <img>, ahead of Unicode emoji of the same name', () => {
    const realmEmoji = [
      { id: '1', name: 'parrot', source_url: '/user_avatars/2/emoji/images/1.gif' },
      { id: '2', name: 'tada', source_url: '/user_avatars/2/emoji/images/2.png' },
    ];
    expect(html(':parrot: :tada:', { realmEmoji })).toBe(
      '<p><img alt=":parrot:" class="emoji" src="/user_avatars/2/emoji/images/1.gif" title="parrot"> ' +
        '<img alt=":tada:" class="emoji" src="/user_avatars/2/emoji/images/2.png" title="tada"></p>',
    );
  });

  it('converts Unicode emoji characters to spans named canonically', () => {
    expect(html('Merry Christmas!!\u{1F384}')).toBe(
      '<p>Merry Christmas!!<span aria-label="christmas tree" class="emoji emoji-1f384" role="img" title="christmas tree">:christmas_tree:</span></p>',
    );
    expect(html('\u2764\uFE0F')).toContain('class="emoji emoji-2764"');
  });

  it('leaves text-presentation characters and digits alone', () => {
    expect(html('123 # \u2194 \u2764')).toBe('<p>123 # \u2194 \u2764</p>');
  });

  it('does not convert escaped or linked :names:', () => {
    expect(html('\\:smile:')).toBe('<p>:smile:</p>');
    expect(html('foo.com/a::tada::b')).toBe(
      '<p><a href="http://foo.com/a::tada::b" rel="noopener noreferrer" target="_blank">foo.com/a::tada::b</a></p>',
    );
  });
});

describe('links', () => {
  it('opens links in a new tab without a referrer', () => {
    expect(html('[hello](https://github.com)')).toBe(
      '<p><a href="https://github.com" rel="noopener noreferrer" target="_blank">hello</a></p>',
    );
  });

  it('links bare URLs, domains and e-mail addresses', () => {
    const result = render('see https://zulip.com/api. and example.com or a@b.com');
    expect(result.html).toBe(
      '<p>see <a href="https://zulip.com/api" rel="noopener noreferrer" target="_blank">https://zulip.com/api</a>. and ' +
        '<a href="http://example.com" rel="noopener noreferrer" target="_blank">example.com</a> or ' +
        '<a href="mailto:a@b.com" rel="noopener noreferrer" target="_blank">a@b.com</a></p>',
    );
    expect(result.hasLink).toBe(true);
  });

  it('does not link file names that look like domains', () => {
    const result = render('edit readme.md and views.py');
    expect(result.html).toBe('<p>edit readme.md and views.py</p>');
    expect(result.hasLink).toBe(false);
  });

  it('adds http:// to scheme-less link targets and keeps relative ones', () => {
    expect(html('[x](example.com/a)')).toContain('href="http://example.com/a"');
    expect(html('[x](/user_uploads/1/a.txt)')).toContain('href="/user_uploads/1/a.txt"');
    expect(html('[x](#narrow/channel/7-general)')).toContain('href="#narrow/channel/7-general"');
  });

  it('shows the URL when the link text is empty', () => {
    expect(html('[](https://github.com)')).toBe(
      '<p><a href="https://github.com" rel="noopener noreferrer" target="_blank">https://github.com</a></p>',
    );
  });

  it('sets no link flag for plain text', () => {
    expect(render('just words').hasLink).toBe(false);
  });
});

describe('images and attachments', () => {
  const preview = (url: string, title?: string) =>
    `<div class="message_inline_image"><a href="${url}" rel="noopener noreferrer" target="_blank"${
      title ? ` title="${title}"` : ''
    }><img src="${url}"></a></div>`;

  it('replaces a paragraph holding only an image URL with its preview', () => {
    const result = render('https://example.com/logo.png');
    expect(result.html).toBe(preview('https://example.com/logo.png'));
    expect(result.hasImage).toBe(true);
    expect(result.hasLink).toBe(true);
  });

  it('puts the preview after the paragraph, with the link text as title', () => {
    expect(html('Logo: [Google logo](https://example.com/logo.PNG?size=2)\nKinda boring')).toBe(
      '<p>Logo: <a href="https://example.com/logo.PNG?size=2" rel="noopener noreferrer" target="_blank">Google logo</a><br>\nKinda boring</p>\n' +
        preview('https://example.com/logo.PNG?size=2', 'Google logo'),
    );
  });

  it('puts the preview inside a list item', () => {
    expect(html('* Google. https://example.com/a.jpg\n* Next')).toBe(
      `<ul>\n<li>Google. <a href="https://example.com/a.jpg" rel="noopener noreferrer" target="_blank">https://example.com/a.jpg</a>${preview(
        'https://example.com/a.jpg',
      )}\n</li>\n<li>Next</li>\n</ul>`,
    );
  });

  it('previews each image once', () => {
    const out = html('https://example.com/a.gif and https://example.com/a.gif');
    expect(out.match(/message_inline_image/g)).toHaveLength(1);
  });

  it('does not preview quoted images, non-images or more than 24 links', () => {
    const quoted = render('> https://example.com/a.png');
    expect(quoted.html).not.toContain('message_inline_image');
    expect(quoted.hasImage).toBe(false);
    expect(quoted.hasLink).toBe(true);
    expect(render('https://example.com/a.png.html').hasImage).toBe(false);
    const many = Array.from({ length: 25 }, (_, i) => `https://example.com/${i}.png`).join(' ');
    expect(render(many).hasImage).toBe(false);
  });

  it('flags links to /user_uploads/ as attachments', () => {
    const upload = render('[report.pdf](/user_uploads/2/ab/xyz/report.pdf)');
    expect(upload.hasAttachment).toBe(true);
    expect(upload.hasImage).toBe(false);
    const uploadedImage = render('[shot.png](/user_uploads/2/cd/uvw/shot.png)');
    expect(uploadedImage.hasAttachment).toBe(true);
    expect(uploadedImage.hasImage).toBe(true);
    expect(render('https://example.com/user_uploads/1/a.txt').hasAttachment).toBe(false);
  });
});

describe('/me messages', () => {
  it('flags content starting with "/me " and keeps it in the HTML', () => {
    const result = render('/me is testing');
    expect(result.isMeMessage).toBe(true);
    expect(result.html).toBe('<p>/me is testing</p>');
  });

  it('does not flag other content', () => {
    expect(render('/meh').isMeMessage).toBe(false);
    expect(render('hello /me waves').isMeMessage).toBe(false);
    expect(render(' /me waves').isMeMessage).toBe(false);
  });
});

describe('safety', () => {
  it('escapes raw HTML', () => {
    expect(html('<script>alert(1)</script>')).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
    expect(html('<img src=x onerror=alert(1)>')).toBe('<p>&lt;img src=x onerror=alert(1)&gt;</p>');
  });

  it.each([
    '[foo](javascript:alert(1))',
    '[foo](JaVaScRiPt:alert(1))',
    '[foo](vbscript:msgbox(1))',
    '[foo](data:text/html;base64,PHNjcmlwdD4=)',
    '[foo](javascript&colon;alert(1))',
    'javascript:alert(1)',
  ])('does not link %s', (content) => {
    const result = render(content);
    expect(result.html).not.toContain('<a ');
    expect(result.hasLink).toBe(false);
  });

  it('keeps link titles inside their attribute', () => {
    expect(html('[a](https://x.com "\\" onmouseover=\\"alert(1)")')).toBe(
      '<p><a href="https://x.com" rel="noopener noreferrer" target="_blank" title="&quot; onmouseover=&quot;alert(1)">a</a></p>',
    );
  });

  it('escapes names from the database in mentions and channel links', () => {
    const evil = '"><img src=x onerror=alert(1)>';
    const out = html(`@**${evil}** @*${evil}* #**${evil}** #**${evil}>"topic<b>**`, {
      users: [{ id: 1, full_name: evil }],
      groups: [{ id: 2, name: evil }],
      channels: [{ id: 3, name: evil }],
    });
    expect(out).not.toMatch(/<img/);
    expect(out).not.toMatch(/<b>/);
    expect(out).toContain('<span class="user-mention" data-user-id="1">@&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</span>');
    expect(out).toContain('href="/#narrow/channel/3-.22.3E.3Cimg-src.3Dx-onerror.3Dalert.281.29.3E"');
  });

  it('escapes realm emoji URLs and skips unsafe ones', () => {
    const realmEmoji = [
      { id: '1', name: 'quote', source_url: '/e/1.png" onload="alert(1)' },
      { id: '2', name: 'bad', source_url: 'javascript:alert(1)' },
    ];
    const out = html(':quote: :bad:', { realmEmoji });
    expect(out).toContain('src="/e/1.png&quot; onload=&quot;alert(1)"');
    expect(out).not.toContain('javascript:');
  });
});

describe('extractMentionCandidates', () => {
  it('collects names, ids, groups and channels once each', () => {
    const found = extractMentionCandidates(
      '@**Alice Smith** @_**Alice Smith** @**Bob|11** @**|12** @*Support Team* @_*ops* ' +
        '#**general** #**Dev Help>a topic** #**general>lunch@42** @**all**',
    );
    expect(found.userNames).toEqual(['Alice Smith', 'all']);
    expect(found.userIds).toEqual([11, 12]);
    expect(found.groupNames).toEqual(['Support Team', 'ops']);
    expect(found.channelNames).toEqual(['general', 'Dev Help>a topic', 'Dev Help', 'general>lunch@42']);
  });

  it('applies the same start-of-mention rule as the renderer', () => {
    expect(extractMentionCandidates('mail@**Alice** x#**general**')).toEqual({
      userNames: [],
      userIds: [],
      groupNames: [],
      channelNames: [],
      emojiNames: [],
    });
  });

  it('collects every name a custom emoji could have, a shared colon included', () => {
    expect(extractMentionCandidates(':party::tada: :Big: `:x:` :a-b_c:').emojiNames).toEqual(['party', 'tada', 'x', 'a-b_c']);
  });

  it('finds everything renderMessage needs to resolve a mention', () => {
    const content = 'Hi @**alice smith**, see #**DEV HELP>x** with @*support team*';
    const found = extractMentionCandidates(content);
    expect(found.userNames.map((n) => n.toLowerCase())).toContain('alice smith');
    expect(found.channelNames.map((n) => n.toLowerCase())).toContain('dev help');
    expect(found.groupNames.map((n) => n.toLowerCase())).toContain('support team');
  });
});
