import { eachDatabase } from './support/databases';
import { sendDirect, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import { subscribe, type TestServer } from './support/server';

/**
 * GET /messages/matches_narrow: of the given messages, those the caller
 * received and the narrow matches, with content and topic highlighted for a
 * search.
 */
eachDatabase('messages matching a narrow', (dialect) => {
  let t: TestServer;
  let launch: number;
  let lunch: number;
  let dm: number;
  let beforeJoining: number;
  beforeAll(async () => {
    const world = await startEventsServer(dialect);
    t = world.t;
    launch = await sendToChannel(t, t.cast.owner, 'general', 'Plans & <dates>', 'The launch is on Monday');
    lunch = await sendToChannel(t, t.cast.owner, 'general', 'food', 'Lunch at noon');
    dm = await sendDirect(t, t.cast.owner, [t.cast.member], 'launch codes, privately');
    // #open's history is public, but the member joins after this message: they never received it.
    beforeJoining = await sendToChannel(t, t.cast.owner, 'open', 'old', 'An old launch note');
    await subscribe(t, world.open, [t.cast.member]);
  });
  afterAll(() => stopEventsServer(t));

  const matches = async (msgIds: number[], narrow: unknown[], as = t.cast.member) => {
    const res = await t.api.get('/messages/matches_narrow', as, { msg_ids: msgIds, narrow });
    expect([res.status, res.body.result]).toEqual([200, 'success']);
    return res.body.messages as Record<string, { match_content: string; match_subject: string }>;
  };

  it('answers the matching messages only, keyed by ID, highlighted for a search', async () => {
    const found = await matches([launch, lunch, dm], [{ operator: 'search', operand: 'launch' }]);
    expect(found).toEqual({
      [String(launch)]: {
        match_content: '<p>The <span class="highlight">launch</span> is on Monday</p>',
        match_subject: 'Plans &amp; &lt;dates&gt;',
      },
      [String(dm)]: {
        match_content: '<p><span class="highlight">launch</span> codes, privately</p>',
        match_subject: '',
      },
    });
  });

  it('gives the content and escaped topic as they are for a narrow without search', async () => {
    const found = await matches([launch, lunch, dm], [{ operator: 'channel', operand: 'general' }]);
    expect(Object.keys(found).map(Number).sort()).toEqual([launch, lunch].sort());
    expect(found[String(lunch)]).toEqual({ match_content: '<p>Lunch at noon</p>', match_subject: 'food' });
    expect(await matches([launch, lunch, dm], [{ operator: 'is', operand: 'dm' }])).toEqual({
      [String(dm)]: { match_content: '<p>launch codes, privately</p>', match_subject: '' },
    });
  });

  it('leaves out messages the caller did not receive, even in a channel whose history they may read', async () => {
    expect(await matches([beforeJoining], [{ operator: 'channel', operand: 'open' }])).toEqual({});
    expect(Object.keys(await matches([beforeJoining], [], t.cast.owner))).toEqual([String(beforeJoining)]);
    // Someone else's direct message, unknown and negative IDs: absent, not an error.
    expect(await matches([dm, 999999, -4], [], t.cast.admin)).toEqual({});
  });

  it('refuses a missing or malformed narrow or list', async () => {
    const noNarrow = await t.api.get('/messages/matches_narrow', t.cast.member, { msg_ids: [launch] });
    expect([noNarrow.status, noNarrow.body]).toEqual([
      400,
      { result: 'error', msg: "Missing 'narrow' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'narrow' },
    ]);
    const noIds = await t.api.get('/messages/matches_narrow', t.cast.member, { narrow: [] });
    expect([noIds.status, noIds.body.var_name]).toEqual([400, 'msg_ids']);
    const notList = await t.api.get('/messages/matches_narrow', t.cast.member, { msg_ids: '{"a":1}', narrow: [] });
    expect([notList.status, notList.body.code]).toEqual([400, 'BAD_REQUEST']);
    const badOperator = await t.api.get('/messages/matches_narrow', t.cast.member, {
      msg_ids: [launch],
      narrow: [{ operator: 'foo', operand: 'x' }],
    });
    expect([badOperator.status, badOperator.body.code]).toEqual([400, 'BAD_NARROW']);
  });
});
