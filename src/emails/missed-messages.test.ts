import { absoluteLinks, groupName } from './missed-messages';

describe('links in a mailed message', () => {
  it('name the organization: site-relative paths and narrows become absolute, other links stay', () => {
    const site = 'https://acme.chat.example.com';
    expect(
      absoluteLinks(
        '<a href="/user_uploads/1/a.png">a</a> <img src="/user_avatars/2.png"> <a href="#narrow/channel/3-x">x</a>' +
          ' <a href="/#narrow/dm/4-y">y</a> <a href="https://else.example.com/p">p</a> <a href="//cdn.example.com/q">q</a>',
        site,
      ),
    ).toBe(
      `<a href="${site}/user_uploads/1/a.png">a</a> <img src="${site}/user_avatars/2.png"> <a href="${site}/#narrow/channel/3-x">x</a>` +
        ` <a href="${site}/#narrow/dm/4-y">y</a> <a href="https://else.example.com/p">p</a> <a href="//cdn.example.com/q">q</a>`,
    );
  });
});

describe('who a group direct message mail names', () => {
  it('lists up to three people, then counts the others', () => {
    expect(groupName(['Ann'])).toBe('Ann');
    expect(groupName(['Ann', 'Bob'])).toBe('Ann and Bob');
    expect(groupName(['Ann', 'Bob', 'Cy'])).toBe('Ann, Bob and Cy');
    expect(groupName(['Ann', 'Bob', 'Cy', 'Di', 'Ed'])).toBe('Ann, Bob and 3 others');
  });
});
