import { ApiError } from '../src/errors';
import { Payload } from '../src/integrations/payload';
import { globalTime, globalTimeFromSeconds, pyNumber, pyRepr, pyStr } from '../src/integrations/python-format';

// Zulip's integrations interpolate values as Python prints them; these are
// the outputs of Python 3's str() and datetime for the same inputs.
describe('values printed as Python prints them', () => {
  it('prints numbers as Python does once json.loads has read them', () => {
    expect(pyNumber(2473545728)).toBe('2473545728');
    expect(pyNumber(21.573108436586445)).toBe('21.573108436586445');
    expect(pyNumber(0.0001)).toBe('0.0001');
    expect(pyNumber(0.0000125)).toBe('1.25e-05');
    expect(pyNumber(1e-7)).toBe('1e-07');
    expect(pyNumber(1.5e21)).toBe('1.5e+21');
    expect(pyNumber(-3.75)).toBe('-3.75');
  });

  it('prints null, booleans, lists and dicts as str() does', () => {
    expect(pyStr(null)).toBe('None');
    expect(pyStr(true)).toBe('True');
    expect(pyStr('text')).toBe('text');
    expect(pyRepr(['metric_alert', 'web_url'])).toBe("['metric_alert', 'web_url']");
    expect(pyStr({ a: [1, false], "it's": 'x\ny' })).toBe("{'a': [1, False], \"it's\": 'x\\ny'}");
  });
});

describe('global times', () => {
  const at = (s: string) => globalTime(new Payload(s, 'payload["startsAt"]'));

  it('keeps the offset the time was written in, to the second', () => {
    expect(at('2021-10-12T09:51:03.157076+02:00')).toBe('<time:2021-10-12T09:51:03+02:00>');
    expect(at('2020-02-06T00:17:58.432911368Z')).toBe('<time:2020-02-06T00:17:58+00:00>');
    expect(at('2024-03-01T02:09:00Z')).toBe('<time:2024-03-01T02:09:00+00:00>');
    expect(at('2024-03-01 02:09')).toBe('<time:2024-03-01T02:09:00>');
    expect(at('2024-03-01T02:09:00-0530')).toBe('<time:2024-03-01T02:09:00-05:30>');
  });

  it('refuses what fromisoformat refuses, naming the field', () => {
    expect(() => at('yesterday')).toThrow(new ApiError('payload["startsAt"] is not a valid date'));
    expect(() => at('2024-13-01T00:00:00Z')).toThrow(ApiError);
  });

  it('reads a Unix timestamp in UTC, dropping the fraction', () => {
    expect(globalTimeFromSeconds(1603322711.147672)).toBe('<time:2020-10-21T23:25:11+00:00>');
    expect(globalTimeFromSeconds(1795967702.9999998)).toBe('<time:2026-11-29T15:55:03+00:00>');
  });
});
